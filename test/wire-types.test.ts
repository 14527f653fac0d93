import { readFileSync } from 'node:fs';
import t from 'tap';
import { wireTypes } from '../src/wire-types.ts';

/** The committed wire types are those the document gives now (npm run wire-types), neutral names applied. */
t.test('actors/wire/openapi.generated.ts is generated from the document as it is', async (t) => {
  const committed = readFileSync(new URL('../actors/wire/openapi.generated.ts', import.meta.url), 'utf8');
  t.ok((await wireTypes()) === committed, 'up to date (run `npm run wire-types` after changing docs/zulip-openapi.yaml)');
  t.match(committed, /svc_feature_level: number;/, 'neutral names');
  t.notMatch(committed, /\bzulip_feature_level\b|\bgiphy_api_key\b|\bclient_gravatar\b|"zulip_extra_emoji"|apns_device_token/, 'no vendor names');
  t.match(committed, /has_video_token\?: boolean;/);
  t.match(committed, /& "has_zoom_token";/, 'the event keeps the type clients know');
});
