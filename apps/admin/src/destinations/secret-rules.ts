import { BadRequestException, HttpException } from '@nestjs/common';

import { type SignatureMode } from '@app/contracts';
import { whsecKey } from '@app/signing';

import { conflict } from '../admin.errors';

/** Why a secret change is refused: a stable code and a message that never holds a secret. */
export interface SecretRefusal {
  readonly status: 400 | 409;
  readonly code: 'no_secret' | 'secret_not_whsec' | 'same_secret';
  readonly message: string;
}

/** What a rotation does: refuses, or keeps the previous secret until an instant (or not at all). */
export type Rotation =
  | { readonly kind: 'refused'; readonly refusal: SecretRefusal }
  | { readonly kind: 'rotate'; readonly previousExpiresAtMs: number | null };

const NOT_WHSEC =
  'a standard-webhooks destination takes only whsec_ secrets: whsec_ then 24 to 64 random ' +
  'bytes in standard base64 (e.g. "whsec_$(openssl rand -base64 32)")';

/** Whether `secret` can be a destination's secret in `mode`; undefined when it can. */
export function secretRefusal(mode: SignatureMode, secret: string): SecretRefusal | undefined {
  if (mode === 'standard-webhooks' && whsecKey(secret) === undefined) {
    return { status: 400, code: 'secret_not_whsec', message: `sharedSecret: ${NOT_WHSEC}` };
  }
  return undefined;
}

/**
 * Whether a destination can move to `mode` with the secrets it holds (its secret and, during an
 * overlap, the previous one, opened); undefined when it can.
 */
export function modeRefusal(
  mode: SignatureMode,
  secrets: readonly string[],
): SecretRefusal | undefined {
  if (secrets.some((secret) => secretRefusal(mode, secret) !== undefined)) {
    return {
      status: 409,
      code: 'secret_not_whsec',
      message: `signatureMode: the destination's secret is not a whsec_ one; ${NOT_WHSEC}. Set one with PUT .../destinations/:destinationId/shared-secret first`,
    };
  }
  return undefined;
}

/**
 * A rotation of the destination's secret (`current`, opened; undefined without one) to `next`:
 * the previous secret keeps signing for `overlapSeconds` (none when 0).
 */
export function planRotation(input: {
  readonly mode: SignatureMode;
  readonly current: string | undefined;
  readonly next: string;
  readonly overlapSeconds: number;
  readonly nowMs: number;
}): Rotation {
  const refusal = rotationRefusal(input.mode, input.current, input.next);
  if (refusal) return { kind: 'refused', refusal };
  const { overlapSeconds, nowMs } = input;
  return {
    kind: 'rotate',
    previousExpiresAtMs: overlapSeconds > 0 ? nowMs + overlapSeconds * 1000 : null,
  };
}

function rotationRefusal(
  mode: SignatureMode,
  current: string | undefined,
  next: string,
): SecretRefusal | undefined {
  if (current === undefined) {
    return {
      status: 400,
      code: 'no_secret',
      message:
        'the destination has no shared secret to rotate; set one with PUT .../destinations/:destinationId/shared-secret',
    };
  }
  if (current === next) {
    return {
      status: 400,
      code: 'same_secret',
      message: 'sharedSecret: the new secret is the current one',
    };
  }
  return secretRefusal(mode, next);
}

/** The HTTP answer of a refusal. */
export function refused(refusal: SecretRefusal): HttpException {
  const { status, code, message } = refusal;
  return status === 409 ? conflict(code, message) : new BadRequestException({ code, message });
}
