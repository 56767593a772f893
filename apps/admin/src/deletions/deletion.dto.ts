import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsOptional,
  IsString,
  IsUUID,
  Length,
} from 'class-validator';

/** Most user ids in one deletion request. */
export const MAX_DELETION_USERS = 1_000;
/** Longest user id accepted. */
export const MAX_USER_ID_LENGTH = 1_024;

/** Body of `POST /admin/v1/deletion-requests`. */
export class CreateDeletionRequestDto {
  @ApiProperty({
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: MAX_USER_ID_LENGTH },
    minItems: 1,
    maxItems: MAX_DELETION_USERS,
    description: 'The deleted users (repeated ids count once).',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_DELETION_USERS)
  @IsString({ each: true })
  @Length(1, MAX_USER_ID_LENGTH, { each: true })
  userIds!: string[];

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'string', format: 'uuid' },
    minItems: 1,
    description:
      'The sources concerned; default: all. Only those with an enabled webhook destination are notified.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @IsUUID('all', { each: true })
  sourceIds?: string[];
}
