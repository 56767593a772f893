import { Body, Delete, Get, HttpCode, Param, Post, Type, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation } from '@nestjs/swagger';

import { AudienceKind } from '@app/settings';

import { AdminTokenGuard } from '../auth/admin-token.guard';
import { adminValidationPipe } from '../validation';

import { CreateAudienceDto } from './audience.dto';
import { AudiencesService } from './audiences.service';
import { SyncsService, UploadedMember } from './syncs.service';
import { ApiAnswers } from '../openapi/api-answers';
import { AudienceAnswer, SyncAnswer } from './audience.answers';

/** What tells the routes of one kind apart: its name in the docs and the body of a page. */
export interface AudienceRoutesOptions<Page> {
  readonly kind: AudienceKind;
  /** With its article, as the docs name it: `an audience`. */
  readonly noun: string;
  readonly page: {
    readonly dto: Type<Page>;
    readonly summary: string;
    readonly description: string;
    members(page: Page): readonly UploadedMember[];
  };
}

/**
 * The routes audiences and computed traits share (the same table, told apart by `kind`): a
 * controller extends the class made for its kind and names its path and tag. The page's
 * body type comes from the options, where the global pipe cannot see it, so the route
 * validates it against `page.dto` itself and names it for the OpenAPI document.
 */
export function audienceRoutes<Page>({ kind, noun, page }: AudienceRoutesOptions<Page>) {
  @ApiBearerAuth()
  @UseGuards(AdminTokenGuard)
  abstract class AudienceRoutes {
    constructor(
      private readonly audiences: AudiencesService,
      private readonly syncs: SyncsService,
    ) {}

    @Post()
    @ApiOperation({
      summary: `Create ${noun}; its trait key is the snake_case form of its name`,
      description:
        'Diacritics are stripped, camelCase split, every run of other characters becomes one ' +
        '`_`, a leading digit gets a `_` before it. 400 when no Latin letter or digit is left; ' +
        '409 `trait_key_exists` when the source has the key already.',
    })
    @ApiAnswers({ status: 201, type: AudienceAnswer }, 400, 404, 409, 413)
    create(@Param('sourceId') sourceId: string, @Body() dto: CreateAudienceDto) {
      return this.audiences.create(sourceId, kind, dto.name);
    }

    @Get()
    @ApiAnswers({ status: 200, type: AudienceAnswer, isArray: true }, 404)
    list(@Param('sourceId') sourceId: string) {
      return this.audiences.list(sourceId, kind);
    }

    @Get(':audienceId')
    @ApiAnswers({ status: 200, type: AudienceAnswer }, 404)
    get(@Param('sourceId') sourceId: string, @Param('audienceId') id: string) {
      return this.audiences.get(sourceId, kind, id);
    }

    @Delete(':audienceId')
    @HttpCode(204)
    @ApiAnswers({ status: 204 }, 404)
    async remove(@Param('sourceId') sourceId: string, @Param('audienceId') id: string) {
      await this.audiences.remove(sourceId, kind, id);
    }

    @Post(':audienceId/syncs')
    @ApiOperation({ summary: 'Open a sync of the full member list (then upload pages, commit)' })
    @ApiAnswers({ status: 201, type: SyncAnswer }, 404, 409)
    open(@Param('sourceId') sourceId: string, @Param('audienceId') id: string) {
      return this.syncs.open(sourceId, kind, id);
    }

    @Get(':audienceId/syncs/:syncId')
    @ApiAnswers({ status: 200, type: SyncAnswer }, 404)
    getSync(
      @Param('sourceId') sourceId: string,
      @Param('audienceId') id: string,
      @Param('syncId') syncId: string,
    ) {
      return this.syncs.get(sourceId, kind, id, syncId);
    }

    @Post(':audienceId/syncs/:syncId/members')
    @HttpCode(200)
    @ApiOperation({ summary: page.summary, description: page.description })
    @ApiBody({ type: page.dto })
    @ApiAnswers({ status: 200, type: SyncAnswer }, 400, 404, 409, 413)
    upload(
      @Param('sourceId') sourceId: string,
      @Param('audienceId') id: string,
      @Param('syncId') syncId: string,
      @Body(adminValidationPipe(page.dto)) body: Page,
    ) {
      return this.syncs.upload(sourceId, kind, id, syncId, page.members(body));
    }

    @Post(':audienceId/syncs/:syncId/commit')
    @HttpCode(200)
    @ApiOperation({
      summary: 'Commit a sync',
      description:
        'Publishes only what changed since the last committed sync (one identify per user), ' +
        'waits until Kafka acknowledged all of them, then stores the new membership; on 503 ' +
        '`kafka_unavailable` (or a crash) the sync stays open and committing again sends the ' +
        'changes again. Committing a committed sync answers its result.',
    })
    @ApiAnswers({ status: 200, type: SyncAnswer }, 404, 409, 503)
    commit(
      @Param('sourceId') sourceId: string,
      @Param('audienceId') id: string,
      @Param('syncId') syncId: string,
    ) {
      return this.syncs.commit(sourceId, kind, id, syncId);
    }

    @Delete(':audienceId/syncs/:syncId')
    @HttpCode(204)
    @ApiOperation({ summary: 'Abandon an open sync and its pages' })
    @ApiAnswers({ status: 204 }, 404, 409)
    async abort(
      @Param('sourceId') sourceId: string,
      @Param('audienceId') id: string,
      @Param('syncId') syncId: string,
    ) {
      await this.syncs.abort(sourceId, kind, id, syncId);
    }
  }
  return AudienceRoutes;
}
