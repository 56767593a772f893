import { Body, Controller, Get, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import { CreateDeletionRequestDto } from './deletion.dto';
import { DeletionsService } from './deletions.service';
import { ApiAnswers } from '../openapi/api-answers';
import { DeletionRequestAnswer } from './deletion.answers';

/** `/admin/v1/deletion-requests`: user deletions told to webhook destinations, with receipts. */
@ApiTags('deletion requests')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/deletion-requests')
export class DeletionsController {
  constructor(private readonly deletions: DeletionsService) {}

  @Post()
  @ApiOperation({
    summary: 'Notify webhook destinations that users were deleted',
    description:
      'Publishes one `delete` notification per user and affected source (the named sources, ' +
      'or all; only enabled sources with an enabled webhook destination are affected) and ' +
      'answers once Kafka acknowledged them all. Otherwise 503 `kafka_unavailable` and the ' +
      'request is not stored; some notifications may still reach the endpoints (a send that ' +
      'timed out can complete later), so sending the request again may notify twice, never ' +
      'less. The webhook body is exactly ' +
      '`{"type":"delete","userId":…,"timestamp":<the request\'s creation time>}`.',
  })
  @ApiAnswers({ status: 201, type: DeletionRequestAnswer }, 400, 404, 503, 413)
  create(@Body() dto: CreateDeletionRequestDto) {
    return this.deletions.create(dto);
  }

  @Get()
  @ApiOperation({ summary: 'The latest 100 deletion requests with their receipts' })
  @ApiAnswers({ status: 200, type: DeletionRequestAnswer, isArray: true })
  list() {
    return this.deletions.list();
  }

  @Get(':requestId')
  @ApiOperation({
    summary: 'A deletion request with its receipts',
    description:
      'Per (source, destination): notifications delivered, pending (no outcome from the ' +
      'dispatcher yet) and failed (dead or discarded).',
  })
  @ApiAnswers({ status: 200, type: DeletionRequestAnswer }, 404)
  get(@Param('requestId') id: string) {
    return this.deletions.get(id);
  }
}
