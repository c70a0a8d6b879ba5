// The single executable's entry (src/build/build-binary.ts bundles it with everything it imports):
// hands the dashboard's files, packed inside the executable as an asset, to the dashboard
// handler, then runs the command line as the `marketplace` command does: `serve`, `--version`
// or an operator command.

import { getAsset, isSea } from 'node:sea';
import { runCommandLine } from './cli.ts';
import { DASHBOARD_ASSET, decodeDashboardFiles, useDashboardFiles } from './http/static-pages.ts';

if (isSea()) useDashboardFiles(decodeDashboardFiles(getAsset(DASHBOARD_ASSET, 'utf8')));

void runCommandLine(process.argv.slice(2));
