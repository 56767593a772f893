import { Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import { DeliveriesService } from './deliveries.service';
import { DeliveriesQueryDto, DeliveryIdParams, DeliveryStatsQueryDto } from './delivery.dto';
import { ReplayService } from './replay.service';
import { ApiAnswers } from '../openapi/api-answers';
import {
  DeliveriesPageAnswer,
  DeliveryDetailAnswer,
  DeliveryStatsAnswer,
  ReplayMadeAnswer,
} from './delivery.answers';

/** `/admin/v1/deliveries`: the delivery ledger, and replays of dead deliveries. */
@ApiTags('deliveries')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/deliveries')
export class DeliveriesController {
  constructor(
    private readonly deliveries: DeliveriesService,
    private readonly replays: ReplayService,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Deliveries, newest first attempt first, a page at a time',
    description:
      'Answers `{items, nextCursor}`; pass `nextCursor` back as `cursor` (with the same ' +
      'filters) for the next page, until it is null. Pages are stable while deliveries are ' +
      'added: each delivery appears once. `from`/`to` bound the first attempt (`to` ' +
      'exclusive). 400 `invalid_request` names a malformed filter, 400 `invalid_cursor` a ' +
      'cursor this API did not give.',
  })
  @ApiAnswers({ status: 200, type: DeliveriesPageAnswer }, 400)
  list(@Query() query: DeliveriesQueryDto) {
    return this.deliveries.list(query);
  }

  @Get('stats')
  @ApiOperation({
    summary: 'Deliveries by outcome whose latest outcome came in the last minutes',
    description:
      'Answers `{since, counts: {delivered, retrying, dead, discarded}}`. Successes are ' +
      'sampled when the dispatcher samples them for the ledger ' +
      '(DISPATCHER_LEDGER_SUCCESS_SAMPLE below 1).',
  })
  @ApiAnswers({ status: 200, type: DeliveryStatsAnswer }, 400)
  stats(@Query() query: DeliveryStatsQueryDto) {
    return this.deliveries.stats(query.minutes ?? 5);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'A delivery with its attempts, oldest first',
    description: '400 when the id is not a UUID; 404 `delivery_not_found`.',
  })
  @ApiAnswers({ status: 200, type: DeliveryDetailAnswer }, 400, 404)
  get(@Param() params: DeliveryIdParams) {
    return this.deliveries.get(params.id);
  }

  @Post(':id/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Replay a dead delivery',
    description:
      "Produces the dead letter's original bytes to the deliveries topic again as a new " +
      'delivery (answered `{deliveryId, replayOf}`): same key, body and message id, a fresh ' +
      'retry window, every current webhook, signed again with the current secret. A delivery may be replayed ' +
      'again; its `replays` counts them. 404 `delivery_not_found`; 409 `not_replayable` ' +
      '(not dead, its dead letter not recorded yet or gone); 409 `destination_disabled`; ' +
      '503 `kafka_unavailable`.',
  })
  @ApiAnswers({ status: 202, type: ReplayMadeAnswer }, 400, 404, 409, 503)
  replay(@Param() params: DeliveryIdParams) {
    return this.replays.replay(params.id);
  }
}
