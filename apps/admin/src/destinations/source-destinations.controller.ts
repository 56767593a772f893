import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Put,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { MAX_DESTINATIONS_PER_SOURCE } from '@app/contracts';

import { AdminTokenGuard } from '../auth/admin-token.guard';
import { Clock, CLOCK } from '../clock';

import { BreakerStates } from './breaker-states';
import {
  CreateDestinationDto,
  ReplaceWebhooksDto,
  RotateSecretDto,
  SharedSecretDto,
  UpdateDestinationDto,
  UpdateWebhookDto,
  WebhookDto,
} from './destination.dto';
import { DestinationRef, DestinationsService } from './destinations.service';
import { ApiAnswers } from '../openapi/api-answers';
import {
  DestinationAnswer,
  DestinationWithBreakerAnswer,
  WebhookAnswer,
} from './destination.answers';

/**
 * `/admin/v1/sources/:sourceId/destinations`: a source's webhook destinations, at most
 * MAX_DESTINATIONS_PER_SOURCE, each addressed by its id.
 */
@ApiTags('destinations')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/sources/:sourceId/destinations')
export class SourceDestinationsController {
  constructor(
    private readonly destinations: DestinationsService,
    private readonly breakers: BreakerStates,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  @ApiOperation({ summary: "The source's destinations, oldest (first) first" })
  @ApiAnswers({ status: 200, type: DestinationAnswer, isArray: true }, 404)
  list(@Param('sourceId') sourceId: string) {
    return this.destinations.list(sourceId);
  }

  @Post()
  @ApiOperation({
    summary: 'Creates a destination (kind webhooks), disabled',
    description:
      `At most ${MAX_DESTINATIONS_PER_SOURCE} per source (409 too_many_destinations); names ` +
      'unique within the source (409 destination_name_taken); a bad filter is 400 ' +
      'invalid_filter with the path of its bad part.',
  })
  @ApiAnswers({ status: 201, type: DestinationAnswer }, 400, 404, 409, 413)
  create(@Param('sourceId') sourceId: string, @Body() dto: CreateDestinationDto) {
    return this.destinations.create(sourceId, dto);
  }

  @Get(':destinationId')
  @ApiOperation({
    summary: 'One destination, with its circuit breaker over every dispatcher replica',
    description:
      '`breaker`: `{state, since, openReplicas}`. `state` is `open` when any dispatcher replica ' +
      'has it open, else `half_open` when one probes, else `closed`; `since` (ISO 8601, or null ' +
      'when no change was seen) is the earliest opening among those replicas, or the latest ' +
      'closing; `openReplicas` counts the replicas not closed. A replica silent for 90 s ' +
      'counts as gone.',
  })
  @ApiAnswers({ status: 200, type: DestinationWithBreakerAnswer }, 404)
  async get(@Param('sourceId') sourceId: string, @Param('destinationId') destinationId: string) {
    const view = await this.destinations.get({ sourceId, destinationId });
    return { ...view, breaker: this.breakers.view(destinationId, this.clock.now()) };
  }

  @Patch(':destinationId')
  @ApiOperation({ summary: 'Renames it or replaces its filter (null: takes every call)' })
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 409, 413)
  update(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Body() dto: UpdateDestinationDto,
  ) {
    return this.destinations.update({ sourceId, destinationId }, dto);
  }

  @Delete(':destinationId')
  @HttpCode(204)
  @ApiAnswers({ status: 204 }, 404)
  async remove(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
  ): Promise<void> {
    await this.destinations.remove({ sourceId, destinationId });
  }

  /** Sets the shared secret (write-only: answers say only whether one is set). */
  @Put(':destinationId/shared-secret')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 413)
  setSecret(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Body() dto: SharedSecretDto,
  ) {
    return this.destinations.setSecret({ sourceId, destinationId }, dto.sharedSecret);
  }

  @Post(':destinationId/shared-secret/rotate')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 413)
  @ApiOperation({
    summary: 'Rotates the shared secret: the previous one keeps signing beside it for the overlap',
    description:
      'The new secret is write-only, as with PUT. 400 no_secret without a secret to rotate, ' +
      '400 same_secret, 400 secret_not_whsec for a standard-webhooks destination. See ' +
      'docs/api.md, "Secret rotation".',
  })
  rotateSecret(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Body() dto: RotateSecretDto,
  ) {
    const ref = { sourceId, destinationId };
    return this.destinations.rotateSecret(ref, dto.sharedSecret, dto.overlapSeconds);
  }

  @Delete(':destinationId/shared-secret')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404)
  clearSecret(@Param('sourceId') sourceId: string, @Param('destinationId') destinationId: string) {
    return this.destinations.setSecret({ sourceId, destinationId }, null);
  }

  /** Enables it; refused while it has no webhook. */
  @Post(':destinationId/enable')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404, 409)
  enable(@Param('sourceId') sourceId: string, @Param('destinationId') destinationId: string) {
    return this.destinations.setEnabled({ sourceId, destinationId }, true);
  }

  @Post(':destinationId/disable')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404)
  disable(@Param('sourceId') sourceId: string, @Param('destinationId') destinationId: string) {
    return this.destinations.setEnabled({ sourceId, destinationId }, false);
  }

  @Post(':destinationId/webhooks')
  @ApiAnswers({ status: 201, type: WebhookAnswer }, 400, 404, 409, 413)
  addWebhook(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Body() dto: WebhookDto,
  ) {
    return this.destinations.addWebhook({ sourceId, destinationId }, dto);
  }

  /** Replaces the list; entries that carry an id keep it. */
  @Put(':destinationId/webhooks')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 409, 413)
  replaceWebhooks(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Body() dto: ReplaceWebhooksDto,
  ) {
    return this.destinations.replaceWebhooks({ sourceId, destinationId }, dto.webhooks);
  }

  /** Edits an entry in place; it keeps its id. */
  @Patch(':destinationId/webhooks/:webhookId')
  @ApiAnswers({ status: 200, type: WebhookAnswer }, 400, 404, 409, 413)
  updateWebhook(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Param('webhookId') webhookId: string,
    @Body() dto: UpdateWebhookDto,
  ) {
    return this.destinations.updateWebhook({ sourceId, destinationId }, webhookId, dto);
  }

  @Delete(':destinationId/webhooks/:webhookId')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404, 409)
  removeWebhook(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Param('webhookId') webhookId: string,
  ) {
    const ref: DestinationRef = { sourceId, destinationId };
    return this.destinations.removeWebhook(ref, webhookId);
  }
}
