// Dependency rules for src/, checked by `npm run lint:deps`; `npm run deps:graph` prints the folder graph.
/** @type {import('dependency-cruiser').IConfiguration} */
export default {
  forbidden: [
    {
      name: 'no-folder-cycle',
      severity: 'error',
      comment:
        'A folder of src/ must not import, directly or through other folders, a folder that imports it: ' +
        'layers that lean on each other cannot be read, tested or replaced one at a time. A cycle of ' +
        'modules inside one folder (pipeline/ with pipeline/stages/ counting as one) is that folder’s own business. ' +
        'Modules directly in src/ (errors.ts, log.ts, ...) sit in the folder every other one is inside, so ' +
        'dependency-cruiser’s folder graph does not follow cycles that pass through them.',
      scope: 'folder',
      // $1 is the top folder of the importer: an import that stays inside it is not a folder cycle.
      from: { path: '^src/([^/]+)' },
      to: { circular: true, pathNot: '^src/$1(/|$)' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports count: a cycle of types between folders ties them together as much as values do.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
