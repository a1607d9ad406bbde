import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** In each tenant's database. */
@Entity({ name: 'invoices' })
export class Invoice {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 200 })
  customer!: string;

  /** Set by `InvoiceMailer` once the invoice went out. */
  @Column({ type: 'boolean', default: false })
  sent!: boolean;
}
