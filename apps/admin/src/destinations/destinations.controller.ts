import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Put,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import {
  CreateDestinationDto,
  ReplaceWebhooksDto,
  RotateSecretDto,
  SharedSecretDto,
  UpdateDestinationDto,
  UpdateWebhookDto,
  WebhookDto,
} from './destination.dto';
import { DestinationRef, DestinationsService, FIRST_DESTINATION } from './destinations.service';
import { ApiAnswers } from '../openapi/api-answers';
import { DestinationAnswer, WebhookAnswer } from './destination.answers';

const FIRST_NOTE =
  "Acts on the source's FIRST destination (its oldest); a source may have several: see /admin/v1/sources/{sourceId}/destinations.";

/**
 * `/admin/v1/sources/:sourceId/destination`: the older single-destination routes, kept as
 * they were. They act on the source's first (oldest) destination; creating refuses when the
 * source has one already.
 */
@ApiTags('destinations (first)')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/sources/:sourceId/destination')
export class DestinationsController {
  constructor(private readonly destinations: DestinationsService) {}

  /** Creates the source's first destination (kind `webhooks`), disabled. */
  @Post()
  @ApiOperation({
    summary: "Creates the source's first destination",
    description:
      'Refused with 409 destination_exists when the source has a destination already; add more with POST /admin/v1/sources/{sourceId}/destinations.',
  })
  @ApiAnswers({ status: 201, type: DestinationAnswer }, 400, 404, 409, 413)
  create(@Param('sourceId') sourceId: string, @Body() dto: CreateDestinationDto) {
    return this.destinations.create(sourceId, dto, true);
  }

  @Get()
  @ApiOperation({ summary: "The source's first destination", description: FIRST_NOTE })
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404)
  get(@Param('sourceId') sourceId: string) {
    return this.destinations.get(first(sourceId));
  }

  @Patch()
  @ApiOperation({
    summary: 'Renames the first destination or sets its filter',
    description: FIRST_NOTE,
  })
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 409, 413)
  update(@Param('sourceId') sourceId: string, @Body() dto: UpdateDestinationDto) {
    return this.destinations.update(first(sourceId), dto);
  }

  @Delete()
  @HttpCode(204)
  @ApiAnswers({ status: 204 }, 404)
  async remove(@Param('sourceId') sourceId: string): Promise<void> {
    await this.destinations.remove(first(sourceId));
  }

  /** Sets the shared secret (write-only: answers say only whether one is set). */
  @Put('shared-secret')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 413)
  setSecret(@Param('sourceId') sourceId: string, @Body() dto: SharedSecretDto) {
    return this.destinations.setSecret(first(sourceId), dto.sharedSecret);
  }

  /** Rotates the shared secret, the previous one signing beside it for the overlap. */
  @Post('shared-secret/rotate')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 413)
  rotateSecret(@Param('sourceId') sourceId: string, @Body() dto: RotateSecretDto) {
    return this.destinations.rotateSecret(first(sourceId), dto.sharedSecret, dto.overlapSeconds);
  }

  @Delete('shared-secret')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404)
  clearSecret(@Param('sourceId') sourceId: string) {
    return this.destinations.setSecret(first(sourceId), null);
  }

  /** Enables the destination; refused while it has no webhook. */
  @Post('enable')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404, 409)
  enable(@Param('sourceId') sourceId: string) {
    return this.destinations.setEnabled(first(sourceId), true);
  }

  @Post('disable')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404)
  disable(@Param('sourceId') sourceId: string) {
    return this.destinations.setEnabled(first(sourceId), false);
  }

  @Post('webhooks')
  @ApiAnswers({ status: 201, type: WebhookAnswer }, 400, 404, 409, 413)
  addWebhook(@Param('sourceId') sourceId: string, @Body() dto: WebhookDto) {
    return this.destinations.addWebhook(first(sourceId), dto);
  }

  /** Replaces the list; entries that carry an id keep it. */
  @Put('webhooks')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 400, 404, 409, 413)
  replaceWebhooks(@Param('sourceId') sourceId: string, @Body() dto: ReplaceWebhooksDto) {
    return this.destinations.replaceWebhooks(first(sourceId), dto.webhooks);
  }

  /** Edits an entry in place; it keeps its id. */
  @Patch('webhooks/:webhookId')
  @ApiAnswers({ status: 200, type: WebhookAnswer }, 400, 404, 409, 413)
  updateWebhook(
    @Param('sourceId') sourceId: string,
    @Param('webhookId') webhookId: string,
    @Body() dto: UpdateWebhookDto,
  ) {
    return this.destinations.updateWebhook(first(sourceId), webhookId, dto);
  }

  @Delete('webhooks/:webhookId')
  @ApiAnswers({ status: 200, type: DestinationAnswer }, 404, 409)
  removeWebhook(@Param('sourceId') sourceId: string, @Param('webhookId') webhookId: string) {
    return this.destinations.removeWebhook(first(sourceId), webhookId);
  }
}

/** The first destination of a source. */
function first(sourceId: string): DestinationRef {
  return { sourceId, destinationId: FIRST_DESTINATION };
}
