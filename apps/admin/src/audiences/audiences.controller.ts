import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';

import { AudienceMembersDto } from './audience.dto';
import { audienceRoutes } from './audience-routes';

/**
 * `/admin/v1/sources/:sourceId/audiences`: audiences and their syncs. Members get an
 * identify with `traits: {<key>: true}` when they join and `{<key>: false}` when they leave.
 */
@ApiTags('audiences')
@Controller('admin/v1/sources/:sourceId/audiences')
export class AudiencesController extends audienceRoutes({
  kind: 'audience',
  noun: 'an audience',
  page: {
    dto: AudienceMembersDto,
    summary: 'Upload a page of up to 10,000 members to an open sync',
    description: 'Pages may come in any order and be sent again; a repeated id counts once.',
    members: (page) => page.userIds.map((userId) => ({ userId, value: true })),
  },
}) {}
