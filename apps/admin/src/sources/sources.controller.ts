import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Patch,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';

import { CreateSourceDto, UpdateSourceDto, UsageQueryDto } from './source.dto';
import { SourcesService } from './sources.service';
import { ApiAnswers } from '../openapi/api-answers';
import { SourceAnswer, SourceWithWriteKeyAnswer, UsageAnswer } from './source.answers';

/** `/admin/v1/sources`: sources, write keys and usage. */
@ApiTags('sources')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/sources')
export class SourcesController {
  constructor(private readonly sources: SourcesService) {}

  /** Creates a source; the answer holds its write key (shown this once). */
  @Post()
  @ApiAnswers({ status: 201, type: SourceWithWriteKeyAnswer }, 400, 413)
  create(@Body() dto: CreateSourceDto) {
    return this.sources.create(dto);
  }

  @Get()
  @ApiAnswers({ status: 200, type: SourceAnswer, isArray: true })
  list() {
    return this.sources.list();
  }

  @Get(':sourceId')
  @ApiAnswers({ status: 200, type: SourceAnswer }, 404)
  get(@Param('sourceId') id: string) {
    return this.sources.get(id);
  }

  @Patch(':sourceId')
  @ApiAnswers({ status: 200, type: SourceAnswer }, 400, 404, 413)
  update(@Param('sourceId') id: string, @Body() dto: UpdateSourceDto) {
    return this.sources.update(id, dto);
  }

  /** A new write key; the old one stops working at once. */
  @Post(':sourceId/write-key')
  @HttpCode(200)
  @ApiAnswers({ status: 200, type: SourceWithWriteKeyAnswer }, 404)
  rotate(@Param('sourceId') id: string) {
    return this.sources.rotateWriteKey(id);
  }

  @Delete(':sourceId')
  @HttpCode(204)
  @ApiAnswers({ status: 204 }, 404)
  async remove(@Param('sourceId') id: string): Promise<void> {
    await this.sources.remove(id);
  }

  /** Calls accepted per UTC day, as counted by ingest (before routing). */
  @Get(':sourceId/usage')
  @ApiAnswers({ status: 200, type: UsageAnswer }, 400, 404)
  async usage(@Param('sourceId') id: string, @Query() query: UsageQueryDto) {
    return { sourceId: id, days: await this.sources.usage(id, query.from, query.to) };
  }
}
