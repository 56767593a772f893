import { Controller, Get, Param, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';
import { ApiAnswers } from '../openapi/api-answers';

import { DestinationHealthAnswer } from './delivery.answers';
import { DestinationHealthService } from './destination-health.service';
import { DestinationIdParams } from './delivery.dto';

/** `/admin/v1/destinations/:destinationId/health`: how a destination's deliveries fare. */
@ApiTags('deliveries')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/destinations')
export class DestinationHealthController {
  constructor(private readonly health: DestinationHealthService) {}

  @Get(':destinationId/health')
  @ApiOperation({
    summary: "A destination's delivery health over the last hour and day, and each webhook's",
    description:
      'From the delivery ledger: the requests made to its webhooks (one per webhook per ' +
      'attempt) of the deliveries first attempted in the last day, and those of the last ' +
      'hour: `attempts`, `successShare`, `latencyP50Ms`, `latencyP99Ms` and `lastError`; ' +
      'with its circuit breaker over every dispatcher replica. 400 when the id is not a ' +
      'UUID; 404 `destination_not_found`.',
  })
  @ApiAnswers({ status: 200, type: DestinationHealthAnswer }, 400, 404)
  get(@Param() params: DestinationIdParams) {
    return this.health.health(params.destinationId);
  }
}
