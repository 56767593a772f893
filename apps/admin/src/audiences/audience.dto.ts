import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsDefined,
  IsString,
  Length,
  ValidateNested,
} from 'class-validator';

/** Most members in one uploaded page of a sync (about 400 KB of ids, under the body limit). */
export const MAX_PAGE_MEMBERS = 10_000;
/** Longest user id accepted. */
export const MAX_MEMBER_ID_LENGTH = 1_024;

/** Body of `POST .../audiences` and `POST .../computed-traits`. */
export class CreateAudienceDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    example: 'First Time Shopper',
    description: 'Its trait key is the snake_case form (`first_time_shopper`), unique per source.',
  })
  @IsString()
  @Length(1, 200)
  name!: string;
}

/** Body of `POST .../audiences/:id/syncs/:syncId/members`: one page of the member list. */
export class AudienceMembersDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: MAX_MEMBER_ID_LENGTH },
    minItems: 1,
    maxItems: MAX_PAGE_MEMBERS,
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PAGE_MEMBERS)
  @IsString({ each: true })
  @Length(1, MAX_MEMBER_ID_LENGTH, { each: true })
  userIds!: string[];
}

/** One user's computed value. */
export class TraitValueDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_MEMBER_ID_LENGTH })
  @IsString()
  @Length(1, MAX_MEMBER_ID_LENGTH)
  userId!: string;

  @ApiProperty({
    description: 'Any JSON value but null (at most 8 KB as JSON)',
    example: 42,
    oneOf: [
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'object' },
      { type: 'array' },
    ],
  })
  @IsDefined()
  value!: unknown;
}

/** Body of `POST .../computed-traits/:id/syncs/:syncId/members`: one page of values. */
export class TraitMembersDto {
  @ApiProperty({ type: [TraitValueDto], minItems: 1, maxItems: MAX_PAGE_MEMBERS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_PAGE_MEMBERS)
  @ValidateNested({ each: true })
  @Type(() => TraitValueDto)
  members!: TraitValueDto[];
}
