import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('invoices')
export class Invoice {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ unique: true })
  orderId!: number;

  @Column('numeric', { precision: 10, scale: 2 })
  amount!: string;
}
