/**
 * How to type the command, for the program's help and docs/cli.md (the
 * package's npm name is `service-orchestrator`; `service` on the registry is
 * someone else's). cli/invocation.ts picks one of these for a printed hint.
 */
export const INVOKING = [
  'The examples write `npx service …`, which runs the copy in the project that holds the package',
  '(npm i service-orchestrator) or a global install. After `npm i -g service-orchestrator` the',
  'commands are `service` and `service-orchestrator` (the second where a system `service`, such as',
  "Linux's /usr/sbin/service, comes first in PATH). Without installing: `npx service-orchestrator …`.",
].join('\n');
