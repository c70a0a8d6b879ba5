// The package's main entry (`marketplace-api`): startServer() to run the server inside another
// program. The typed clients are the `marketplace-api/client` entry.

export { startServer, ConfigError } from './embed.ts';
export type { StartServerOptions, RunningServer, DemoKey } from './embed.ts';
