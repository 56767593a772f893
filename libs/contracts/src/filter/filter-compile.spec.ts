import type { RoutedCallType } from '../calls';
import { compileFilter, eventNameOf, filterAccepts, type FilterSubject } from './filter-compile';
import { validateFilter } from './filter-validate';

const ORDER = {
  type: 'track',
  event: 'Order Completed',
  userId: 'u1',
  properties: { total: 120, currency: 'EUR', coupon: null, products: [{ sku: 'A-1' }] },
  traits: undefined,
  context: { page: { path: '/checkout' } },
};

/** A subject over a call, counting how often the body is asked for. */
function subject(call: Record<string, unknown>): FilterSubject & { bodyReads: number } {
  const s = {
    type: call.type as RoutedCallType,
    bodyReads: 0,
    eventName: () => eventNameOf(call),
    body: () => {
      s.bodyReads += 1;
      return call;
    },
  };
  return s;
}

function accepts(filter: unknown, call: Record<string, unknown> = ORDER): boolean {
  const checked = validateFilter(filter);
  if (!checked.ok) throw new Error(checked.problem.message);
  return filterAccepts(compileFilter(checked.filter), subject(call));
}

const where = (field: string, op: string, value?: unknown) => ({
  where: value === undefined ? { field, op } : { field, op, value },
});

describe(filterAccepts.name, () => {
  it.each([
    ['an empty filter', {}, true],
    ['its type', { types: ['track'] }, true],
    ['another type', { types: ['page', 'identify'] }, false],
    ['its event', { events: ['Order Completed'] }, true],
    ['another event', { events: ['Order Refunded'] }, false],
    ['an event prefix', { eventPrefixes: ['Order '] }, true],
    ['an event or a prefix', { events: ['X'], eventPrefixes: ['Ord'] }, true],
    ['eq a number', where('properties.total', 'eq', 120), true],
    ['eq a string against a number', where('properties.total', 'eq', '120'), false],
    ['eq null', where('properties.coupon', 'eq', null), true],
    ['ne', where('properties.currency', 'ne', 'USD'), true],
    ['ne on an absent field', where('properties.missing', 'ne', 'USD'), true],
    ['gte', where('properties.total', 'gte', 100), true],
    ['gt', where('properties.total', 'gt', 120), false],
    ['lte', where('properties.total', 'lte', 120), true],
    ['lt', where('properties.total', 'lt', 120), false],
    ['gte a string against a number', where('properties.total', 'gte', '1'), false],
    ['lt on strings', where('properties.currency', 'lt', 'USD'), true],
    ['in', where('properties.currency', 'in', ['USD', 'EUR']), true],
    ['in, not there', where('properties.currency', 'in', ['USD']), false],
    ['exists', where('userId', 'exists'), true],
    ['exists on null', where('properties.coupon', 'exists'), false],
    ['exists false on an absent field', where('anonymousId', 'exists', false), true],
    ['prefix', where('context.page.path', 'prefix', '/check'), true],
    ['suffix', where('context.page.path', 'suffix', 'out'), true],
    ['prefix on a number', where('properties.total', 'prefix', '1'), false],
    ['an array index', where('properties.products.0.sku', 'eq', 'A-1'), true],
    ['an index past the end', where('properties.products.3.sku', 'exists'), false],
    ['a name on an array', where('properties.products.sku', 'exists'), false],
    ['an inherited property', where('properties.constructor', 'exists'), false],
    [
      'and',
      {
        where: {
          and: [where('properties.total', 'gte', 100).where, where('userId', 'eq', 'u1').where],
        },
      },
      true,
    ],
    [
      'and, one false',
      {
        where: {
          and: [where('properties.total', 'gte', 200).where, where('userId', 'eq', 'u1').where],
        },
      },
      false,
    ],
    [
      'or',
      {
        where: {
          or: [where('properties.total', 'gte', 200).where, where('userId', 'eq', 'u1').where],
        },
      },
      true,
    ],
    ['not', { where: { not: where('properties.total', 'gte', 200).where } }, true],
    [
      'every part must match',
      { types: ['track'], events: ['Nope'], ...where('userId', 'exists') },
      false,
    ],
  ])('%s -> %s', (_name, filter, expected) => {
    expect(accepts(filter)).toBe(expected);
  });

  it('takes no call without an event name when it asks for events', () => {
    expect(accepts({ events: ['Order Completed'] }, { type: 'identify', userId: 'u' })).toBe(false);
  });

  it('reads a page name as its event name', () => {
    expect(accepts({ events: ['Home'] }, { type: 'page', name: 'Home' })).toBe(true);
  });

  it('asks for the body only when the filter has a where clause and the rest matched', () => {
    const compiled = compileFilter({ types: ['page'], where: { field: 'a', op: 'exists' } });
    const noBody = subject(ORDER);
    expect(filterAccepts(compiled, noBody)).toBe(false);
    expect(noBody.bodyReads).toBe(0);
    const typesOnly = compileFilter({ types: ['track'] });
    const s = subject(ORDER);
    expect(filterAccepts(typesOnly, s)).toBe(true);
    expect(s.bodyReads).toBe(0);
  });
});

describe(eventNameOf.name, () => {
  it.each([
    [{ event: 'E' }, 'E'],
    [{ name: 'N' }, 'N'],
    [{ event: 'E', name: 'N' }, 'E'],
    [{ event: '' }, undefined],
    [{ event: 3, name: 'N' }, 'N'],
    [null, undefined],
  ])('%j -> %s', (call, name) => {
    expect(eventNameOf(call)).toBe(name);
  });
});
