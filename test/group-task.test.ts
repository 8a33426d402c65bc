/**
 * One group's share of the session's requirements (core/groupTask.ts): the passages of the one
 * request text BAZINGA keeps per session that name the group, by its id, name and component path.
 */
import { describe, expect, it } from 'vitest';
import { groupRequirements, type GroupIdentity } from '../skills/context-assembler/scripts/lib/core/groupTask.ts';

const AUTH: GroupIdentity = { id: 'AUTH', name: 'JWT authentication', componentPath: 'src/auth/' };
const CART: GroupIdentity = { id: 'CART', name: 'Offline cart sync', componentPath: 'src/cart/' };

const SECTIONS = [
  'Build the acme storefront.',
  '',
  '## Authentication',
  '- JWT login for customers',
  '- refresh tokens rotate weekly',
  '',
  '## Cart',
  '- offline queue in IndexedDB',
  '- replay on reconnect',
  '',
  '## Constraints',
  '- TypeScript strict everywhere',
].join('\n');

describe('groupRequirements', () => {
  it.each([
    {
      name: 'one sentence for two groups: each gets its own clause',
      text: 'Add JWT auth and an offline cart to the shop app',
      groups: [AUTH, CART],
      expected: { AUTH: 'Add JWT auth', CART: 'and an offline cart to the shop app' },
    },
    {
      name: 'a session of one group: the whole request is its task',
      text: 'Add JWT auth and an offline cart to the shop app',
      groups: [AUTH],
      expected: { AUTH: 'Add JWT auth and an offline cart to the shop app' },
    },
    {
      name: 'a group no passage names gets none; a group the session does not list is named by its id',
      text: 'Add JWT auth, then make the cart work offline.',
      groups: [AUTH, { id: 'PAY', name: 'Payments', componentPath: null }],
      // (For AUTH the cart clause names no group the session lists: it continues the clause before it.)
      expected: { PAY: '', CART: 'then make the cart work offline.', AUTH: 'Add JWT auth, then make the cart work offline.' },
    },
    {
      name: 'markdown sections: list items under a heading are the heading group’s; a preamble and an unnamed section are nobody’s',
      text: SECTIONS,
      groups: [AUTH, CART],
      expected: {
        AUTH: '## Authentication\n- JWT login for customers\n- refresh tokens rotate weekly',
        CART: '## Cart\n- offline queue in IndexedDB\n- replay on reconnect',
      },
    },
    {
      name: 'a sentence naming no group continues the one before it in its paragraph',
      text: 'We sell shoes. Add JWT login. Tokens must rotate every week. The cart works offline. It replays on reconnect.',
      groups: [AUTH, CART],
      expected: { AUTH: 'Add JWT login. Tokens must rotate every week.', CART: 'The cart works offline. It replays on reconnect.' },
    },
    {
      name: 'a clause naming two groups goes to both when it names as many words of each',
      text: 'Add JWT auth for the offline cart; keep the shop fast',
      groups: [AUTH, CART],
      expected: { AUTH: 'Add JWT auth for the offline cart; keep the shop fast', CART: 'Add JWT auth for the offline cart; keep the shop fast' },
    },
    {
      name: 'else to the group it names most words of',
      text: 'Add JWT auth with signed tokens, and theme the storefront with design tokens',
      groups: [AUTH, { id: 'THEME', name: 'Design tokens theming', componentPath: 'src/theme/' }],
      expected: { AUTH: 'Add JWT auth with signed tokens', THEME: 'and theme the storefront with design tokens' },
    },
    {
      name: 'words two groups share tell neither apart (admin), nor do layout segments of a path (packages, src)',
      text: 'Publish the packages, build the admin dashboard, and admin refunds',
      groups: [
        { id: 'REFUND', name: 'Admin refunds', componentPath: 'packages/admin/src/refunds/' },
        { id: 'DASH', name: 'Admin dashboard', componentPath: 'packages/admin/src/dashboard/' },
      ],
      expected: { REFUND: 'and admin refunds', DASH: 'build the admin dashboard' },
    },
    {
      name: 'commas inside brackets do not split; an unnamed clause joined by "and" to a named one is part of it',
      text: 'Add roles (owner, admin, viewer) and an offline cart; add readiness and liveness probes',
      groups: [{ id: 'ROLES', name: 'Roles and permissions', componentPath: null }, CART, { id: 'K8S', name: 'Kubernetes probes', componentPath: 'deploy/k8s/' }],
      expected: { ROLES: 'Add roles (owner, admin, viewer)', CART: 'and an offline cart', K8S: 'add readiness and liveness probes' },
    },
    {
      name: 'a word and a longer one it begins (at least four letters) are the same word; a shorter beginning is not',
      text: 'Authentication must use JWT, and the app syncs carts',
      groups: [{ id: 'AUTH', name: 'Auth', componentPath: null }, { id: 'APPS', name: 'Mobile apps', componentPath: null }, CART],
      expected: { AUTH: 'Authentication must use JWT', APPS: '', CART: 'and the app syncs carts' },
    },
  ])('$name', ({ text, groups, expected }) => {
    for (const [group, own] of Object.entries(expected)) expect(groupRequirements(text, groups, group), group).toBe(own);
  });
});
