import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';

import { AdminTokenGuard } from '../auth/admin-token.guard';
import { AuditPageDto, AuditQueryDto } from './audit.dto';
import { AuditRepository } from './audit.repository';
import { ApiAnswers } from '../openapi/api-answers';

/** Entries shown when the query names no limit. */
const DEFAULT_AUDIT_PAGE = 50;

/** `/admin/v1/audit`: every change made through the admin API, newest first. */
@ApiTags('audit')
@ApiBearerAuth()
@UseGuards(AdminTokenGuard)
@Controller('admin/v1/audit')
export class AuditController {
  constructor(private readonly audit: AuditRepository) {}

  @Get()
  @ApiOperation({
    summary: 'Changes made through the admin API, newest first, a page at a time',
    description:
      'Each entry names the token that made the change (its name, never the token), the ' +
      'method, the route and path, the id of the thing changed, and when. Answers ' +
      '`{items, nextCursor}`; pass `nextCursor` back as `cursor` until it is null.',
  })
  @ApiAnswers({ status: 200, type: AuditPageDto }, 400)
  async list(@Query() query: AuditQueryDto): Promise<AuditPageDto> {
    const limit = query.limit ?? DEFAULT_AUDIT_PAGE;
    const items = await this.audit.page(limit, query.cursor);
    return { items, nextCursor: items.length === limit ? items[limit - 1].id : null };
  }
}
