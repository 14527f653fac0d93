/** Role values of the Zulip API. Lower is more powerful. */
export const Role = {
  owner: 100,
  administrator: 200,
  moderator: 300,
  member: 400,
  guest: 600,
} as const;
export type Role = (typeof Role)[keyof typeof Role];
export const ROLE_VALUES: readonly Role[] = Object.values(Role);
