import { Body, Controller, Delete, HttpCode, Param, Post } from '@nestjs/common';
import { ParseIdPipe } from '@app/service-kit';
import { CreateSubscriptionDto } from './dto/create-subscription.dto';
import { Subscription } from './subscription.entity';
import { SubscriptionsService } from './subscriptions.service';

@Controller('subscriptions')
export class SubscriptionsController {
  constructor(private readonly subscriptions: SubscriptionsService) {}

  /** 201 with the subscription; 409 when the subscriber already follows the author. */
  @Post()
  subscribe(@Body() body: CreateSubscriptionDto): Promise<Subscription> {
    return this.subscriptions.subscribe(body);
  }

  /** 204; 404 when there is no such subscription. */
  @Delete(':id')
  @HttpCode(204)
  unsubscribe(@Param('id', ParseIdPipe) id: number): Promise<void> {
    return this.subscriptions.unsubscribe(id);
  }
}
