import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import { AudienceMembersDto, CreateAudienceDto } from './audience.dto';
import { AudiencesService } from './audiences.service';
import { SyncsService } from './syncs.service';

const KIND = 'audience';

/** Text of the commit operation, shared by both kinds. */
export const COMMIT_DESCRIPTION =
  'Publishes only what changed since the last committed sync (one identify per user), waits ' +
  'until Kafka acknowledged all of them, then stores the new membership; on 503 ' +
  '`kafka_unavailable` (or a crash) the sync stays open and committing again sends the ' +
  'changes again. Committing a committed sync answers its result.';

/**
 * `/admin/v1/sources/:sourceId/audiences`: audiences and their syncs. Members get an
 * identify with `traits: {<key>: true}` when they join and `{<key>: false}` when they leave.
 */
@ApiTags('audiences')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/sources/:sourceId/audiences')
export class AudiencesController {
  constructor(
    private readonly audiences: AudiencesService,
    private readonly syncs: SyncsService,
  ) {}

  @Post()
  @ApiOperation({
    summary: 'Create an audience; its trait key is the snake_case form of its name',
    description:
      'Diacritics are stripped, camelCase split, every run of other characters becomes one ' +
      '`_`, a leading digit gets a `_` before it. 400 when no Latin letter or digit is left; ' +
      '409 `trait_key_exists` when the source has the key already.',
  })
  create(@Param('sourceId') sourceId: string, @Body() dto: CreateAudienceDto) {
    return this.audiences.create(sourceId, KIND, dto.name);
  }

  @Get()
  list(@Param('sourceId') sourceId: string) {
    return this.audiences.list(sourceId, KIND);
  }

  @Get(':audienceId')
  get(@Param('sourceId') sourceId: string, @Param('audienceId') id: string) {
    return this.audiences.get(sourceId, KIND, id);
  }

  @Delete(':audienceId')
  @HttpCode(204)
  async remove(@Param('sourceId') sourceId: string, @Param('audienceId') id: string) {
    await this.audiences.remove(sourceId, KIND, id);
  }

  @Post(':audienceId/syncs')
  @ApiOperation({ summary: 'Open a sync of the full member list (then upload pages, commit)' })
  open(@Param('sourceId') sourceId: string, @Param('audienceId') id: string) {
    return this.syncs.open(sourceId, KIND, id);
  }

  @Get(':audienceId/syncs/:syncId')
  getSync(
    @Param('sourceId') sourceId: string,
    @Param('audienceId') id: string,
    @Param('syncId') syncId: string,
  ) {
    return this.syncs.get(sourceId, KIND, id, syncId);
  }

  @Post(':audienceId/syncs/:syncId/members')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Upload a page of up to 10,000 members to an open sync',
    description: 'Pages may come in any order and be sent again; a repeated id counts once.',
  })
  upload(
    @Param('sourceId') sourceId: string,
    @Param('audienceId') id: string,
    @Param('syncId') syncId: string,
    @Body() dto: AudienceMembersDto,
  ) {
    const members = dto.userIds.map((userId) => ({ userId, value: true }));
    return this.syncs.upload(sourceId, KIND, id, syncId, members);
  }

  @Post(':audienceId/syncs/:syncId/commit')
  @HttpCode(200)
  @ApiOperation({ summary: 'Commit a sync', description: COMMIT_DESCRIPTION })
  commit(
    @Param('sourceId') sourceId: string,
    @Param('audienceId') id: string,
    @Param('syncId') syncId: string,
  ) {
    return this.syncs.commit(sourceId, KIND, id, syncId);
  }

  @Delete(':audienceId/syncs/:syncId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Abandon an open sync and its pages' })
  async abort(
    @Param('sourceId') sourceId: string,
    @Param('audienceId') id: string,
    @Param('syncId') syncId: string,
  ) {
    await this.syncs.abort(sourceId, KIND, id, syncId);
  }
}
