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
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import {
  CreateDestinationDto,
  ReplaceWebhooksDto,
  SharedSecretDto,
  UpdateDestinationDto,
  UpdateWebhookDto,
  WebhookDto,
} from './destination.dto';
import { DestinationsService } from './destinations.service';

/** `/admin/v1/sources/:sourceId/destination`: the source's webhook destination. */
@ApiTags('destinations')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/sources/:sourceId/destination')
export class DestinationsController {
  constructor(private readonly destinations: DestinationsService) {}

  /** Creates the destination (kind `webhooks`), disabled. */
  @Post()
  create(@Param('sourceId') sourceId: string, @Body() dto: CreateDestinationDto) {
    return this.destinations.create(sourceId, dto);
  }

  @Get()
  get(@Param('sourceId') sourceId: string) {
    return this.destinations.get(sourceId);
  }

  @Patch()
  update(@Param('sourceId') sourceId: string, @Body() dto: UpdateDestinationDto) {
    return this.destinations.rename(sourceId, dto.name);
  }

  @Delete()
  @HttpCode(204)
  async remove(@Param('sourceId') sourceId: string): Promise<void> {
    await this.destinations.remove(sourceId);
  }

  /** Sets the shared secret (write-only: answers say only whether one is set). */
  @Put('shared-secret')
  setSecret(@Param('sourceId') sourceId: string, @Body() dto: SharedSecretDto) {
    return this.destinations.setSecret(sourceId, dto.sharedSecret);
  }

  @Delete('shared-secret')
  clearSecret(@Param('sourceId') sourceId: string) {
    return this.destinations.setSecret(sourceId, null);
  }

  /** Enables the destination; refused while it has no webhook. */
  @Post('enable')
  @HttpCode(200)
  enable(@Param('sourceId') sourceId: string) {
    return this.destinations.setEnabled(sourceId, true);
  }

  @Post('disable')
  @HttpCode(200)
  disable(@Param('sourceId') sourceId: string) {
    return this.destinations.setEnabled(sourceId, false);
  }

  @Post('webhooks')
  addWebhook(@Param('sourceId') sourceId: string, @Body() dto: WebhookDto) {
    return this.destinations.addWebhook(sourceId, dto);
  }

  /** Replaces the list; entries that carry an id keep it. */
  @Put('webhooks')
  replaceWebhooks(@Param('sourceId') sourceId: string, @Body() dto: ReplaceWebhooksDto) {
    return this.destinations.replaceWebhooks(sourceId, dto.webhooks);
  }

  /** Edits an entry in place; it keeps its id. */
  @Patch('webhooks/:webhookId')
  updateWebhook(
    @Param('sourceId') sourceId: string,
    @Param('webhookId') webhookId: string,
    @Body() dto: UpdateWebhookDto,
  ) {
    return this.destinations.updateWebhook(sourceId, webhookId, dto);
  }

  @Delete('webhooks/:webhookId')
  removeWebhook(@Param('sourceId') sourceId: string, @Param('webhookId') webhookId: string) {
    return this.destinations.removeWebhook(sourceId, webhookId);
  }
}
