import { validateSync } from 'class-validator';

import {
  AliasCall,
  BaseCall,
  GroupCall,
  IdentifyCall,
  PageCall,
  ScreenCall,
  TrackCall,
} from './call.dto';
import { CallType } from './calls';

const CALL_CLASSES: Record<CallType, new () => BaseCall> = {
  track: TrackCall,
  page: PageCall,
  screen: ScreenCall,
  identify: IdentifyCall,
  group: GroupCall,
  alias: AliasCall,
};

/** Ids that clients may send as numbers; they travel on as strings. */
const ID_FIELDS = ['userId', 'anonymousId', 'previousId', 'groupId'] as const;

/** Turns ids sent as finite numbers into strings, in place. */
export function stringifyIds(call: Record<string, unknown>): void {
  for (const field of ID_FIELDS) {
    const value = call[field];
    if (typeof value === 'number' && Number.isFinite(value)) call[field] = String(value);
  }
}

/**
 * Checks a call against its class's rules. The instance is built with `Object.assign` rather
 * than class-transformer, which costs several times more per call (DESIGN.md section 8).
 * @returns undefined when valid, else a message naming the field and the rule.
 */
export function validateCall(type: CallType, call: Record<string, unknown>): string | undefined {
  // Assigning an own `__proto__` key would replace the instance's prototype, and with it the
  // rules class-validator finds for it.
  if (Object.hasOwn(call, '__proto__')) return '__proto__ is not an allowed field';
  const instance = Object.assign(new CALL_CLASSES[type](), call);
  const errors = validateSync(instance, {
    stopAtFirstError: true,
    forbidUnknownValues: false,
    validationError: { target: false, value: false },
  });
  if (errors.length === 0) return undefined;
  const [rule, message] = Object.entries(errors[0].constraints ?? { invalid: 'invalid call' })[0];
  return `${message} (${rule})`;
}
