import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import { ReplayIdParams, ReplayRangeDto, ReplaysQueryDto } from './delivery.dto';
import { ReplayJobsService } from './replay-jobs.service';
import { ApiAnswers } from '../openapi/api-answers';
import { ReplayJobAnswer } from './delivery.answers';

/** Bulk replays of a destination's dead deliveries, and their progress. */
@ApiTags('replays')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1')
export class ReplaysController {
  constructor(private readonly jobs: ReplayJobsService) {}

  @Post('sources/:sourceId/destinations/:destinationId/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: "Replay a destination's dead deliveries of a time range",
    description: 'As POST /admin/v1/sources/{sourceId}/destination/replay, for this destination.',
  })
  @ApiAnswers({ status: 202, type: ReplayJobAnswer }, 400, 404, 409, 413)
  startFor(
    @Param('sourceId') sourceId: string,
    @Param('destinationId') destinationId: string,
    @Body() dto: ReplayRangeDto,
  ) {
    return this.jobs.start(sourceId, dto, destinationId);
  }

  @Post('sources/:sourceId/destination/replay')
  @HttpCode(202)
  @ApiOperation({
    summary: "Replay the first destination's dead deliveries of a time range",
    description:
      "Acts on the source's FIRST destination (its oldest). " +
      'Starts a job that replays, in the background, every delivery of the destination that ' +
      "was dead when the job began, first attempted in `[from, to)` (at most the ledger's " +
      'retention), with `reason` when given; each one as a single replay would. Answers the ' +
      'job: poll `GET /admin/v1/replays/{id}` for `replayed` and `failed` (dead letters no ' +
      'longer on their topic) against `total`. 404 `source_not_found` / ' +
      '`destination_not_found`; 409 `destination_disabled`.',
  })
  @ApiAnswers({ status: 202, type: ReplayJobAnswer }, 400, 404, 409, 413)
  start(@Param('sourceId') sourceId: string, @Body() dto: ReplayRangeDto) {
    return this.jobs.start(sourceId, dto);
  }

  @Get('replays')
  @ApiOperation({
    summary: 'The latest bulk replays, newest first',
    description:
      'Answers a list of jobs as `GET /admin/v1/replays/{id}` shows one; `destinationId` ' +
      'keeps those of one destination, `limit` (1 to 100, default 20) bounds the list.',
  })
  @ApiAnswers({ status: 200, type: ReplayJobAnswer, isArray: true }, 400)
  list(@Query() query: ReplaysQueryDto) {
    return this.jobs.list(query.destinationId, query.limit ?? 20);
  }

  @Get('replays/:id')
  @ApiOperation({
    summary: 'A bulk replay and its progress',
    description: '404 `replay_not_found`.',
  })
  @ApiAnswers({ status: 200, type: ReplayJobAnswer }, 400, 404)
  get(@Param() params: ReplayIdParams) {
    return this.jobs.get(params.id);
  }
}
