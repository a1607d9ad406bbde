import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { OrdersService } from './orders.fixture';

/** What `POST /orders` takes. */
interface PlaceOrder {
  readonly customer: string;
  readonly seq: number;
}

/** The producer side of an app over HTTP: `POST /orders` writes an order and its event (202 once committed). */
@Controller('orders')
export class OrdersHttpController {
  constructor(private readonly orders: OrdersService) {}

  @Post()
  @HttpCode(202)
  async place(@Body() body: PlaceOrder): Promise<{ id: number }> {
    const order = await this.orders.place(String(body.customer), 1, Number(body.seq));
    return { id: order.id };
  }
}
