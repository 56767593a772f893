import { Controller } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';

import { TraitMembersDto } from './audience.dto';
import { audienceRoutes } from './audience-routes';

/**
 * `/admin/v1/sources/:sourceId/computed-traits`: computed traits and their syncs. A user
 * gets an identify with `traits: {<key>: value}` when its value is new or changed, and
 * `{<key>: null}` when it is no longer listed.
 */
@ApiTags('computed traits')
@Controller('admin/v1/sources/:sourceId/computed-traits')
export class ComputedTraitsController extends audienceRoutes({
  kind: 'computed_trait',
  noun: 'a computed trait',
  page: {
    dto: TraitMembersDto,
    summary: 'Upload a page of up to 10,000 users and their values to an open sync',
    description:
      'Pages may come in any order and be sent again; a repeated user keeps the last value. A user listed before and not now gets the trait null.',
    members: (page) => page.members,
  },
}) {}
