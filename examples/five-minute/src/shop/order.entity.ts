import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

@Entity('orders')
export class Order {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column()
  customerId!: number;

  @Column('numeric', { precision: 10, scale: 2 })
  total!: string;

  @CreateDateColumn()
  createdAt!: Date;
}
