// The catalog views the configuration defines: the default one (the plain endpoint) and one per
// profile, found by the profile name a caller's door carries on its reply.
import type { CallContext } from '../call/context.js';
import { defaultView, profileView, type CatalogView } from '../catalog/view.js';
import type { Config } from '../config/schema.js';

/** What a reply naming no profile this config has sees: nothing (its door should have refused it). */
const NOTHING: CatalogView = {
  profile: '\u0000none',
  mode: 'full',
  search: { alwaysVisible: [], limit: 8 },
  shows: () => false,
  alwaysVisible: () => false,
};

export function catalogViews(catalog: Config['catalog']): (ctx: CallContext) => CatalogView {
  const plain = defaultView(catalog.mode, catalog.search, catalog.codeMode);
  const profiles = new Map(
    Object.entries(catalog.profiles).map(([name, p]) => [
      name,
      profileView(name, p, catalog.mode, catalog.search, catalog.codeMode),
    ]),
  );
  return (ctx) => {
    const name = ctx.reply.view;
    return name === undefined ? plain : (profiles.get(name) ?? NOTHING);
  };
}
