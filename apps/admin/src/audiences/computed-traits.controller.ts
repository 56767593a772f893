import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import { CreateAudienceDto, TraitMembersDto } from './audience.dto';
import { COMMIT_DESCRIPTION } from './audiences.controller';
import { AudiencesService } from './audiences.service';
import { SyncsService } from './syncs.service';

const KIND = 'computed_trait';

/**
 * `/admin/v1/sources/:sourceId/computed-traits`: computed traits and their syncs. A user
 * gets an identify with `traits: {<key>: value}` when its value is new or changed, and
 * `{<key>: null}` when it is no longer listed.
 */
@ApiTags('computed traits')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/sources/:sourceId/computed-traits')
export class ComputedTraitsController {
  constructor(
    private readonly audiences: AudiencesService,
    private readonly syncs: SyncsService,
  ) {}

  @Post()
  @ApiOperation({
    summary: 'Create a computed trait; its trait key is the snake_case form of its name',
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
    summary: 'Upload a page of up to 10,000 users and their values to an open sync',
    description:
      'Pages may come in any order and be sent again; a repeated user keeps the last value. A user listed before and not now gets the trait null.',
  })
  upload(
    @Param('sourceId') sourceId: string,
    @Param('audienceId') id: string,
    @Param('syncId') syncId: string,
    @Body() dto: TraitMembersDto,
  ) {
    return this.syncs.upload(sourceId, KIND, id, syncId, dto.members);
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
