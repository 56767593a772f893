import {
  AliasCall,
  BaseCall,
  GroupCall,
  IdentifyCall,
  PageCall,
  ScreenCall,
  TrackCall,
} from './call.dto';
import { CallChecker } from './call-checker';
import { CallType } from './calls';

/** The classes whose rules define each call type. */
export const CALL_CLASSES: Readonly<Record<CallType, new () => BaseCall>> = {
  track: TrackCall,
  page: PageCall,
  screen: ScreenCall,
  identify: IdentifyCall,
  group: GroupCall,
  alias: AliasCall,
};

/** A checker per type, derived once from the classes' rules. */
const CHECKERS = Object.fromEntries(
  Object.entries(CALL_CLASSES).map(([type, cls]) => [type, new CallChecker(cls)]),
) as Record<CallType, CallChecker>;

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
 * Checks a call against its class's rules, through a checker derived from them at start-up
 * rather than class-transformer and `validateSync`, which cost several times more per call
 * (docs/performance.md). The call itself is read, never copied.
 * @returns undefined when valid, else a message naming the field and the rule.
 */
export function validateCall(type: CallType, call: Record<string, unknown>): string | undefined {
  return CHECKERS[type].check(call);
}
