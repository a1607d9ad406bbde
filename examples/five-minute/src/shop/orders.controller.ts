import { Body, Controller, Post } from '@nestjs/common';
import { Order } from './order.entity.js';
import { OrdersService } from './orders.service.js';

/** What `POST /orders` takes. */
interface PlaceOrder {
  customerId: number;
  total: string;
}

/** `curl -X POST localhost:3000/orders -H 'content-type: application/json' -d '{"customerId":7,"total":"19.90"}'` */
@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  place(@Body() body: PlaceOrder): Promise<Order> {
    return this.orders.place(Number(body.customerId), String(body.total));
  }
}
