import type { Command } from '../command';
import { schemaCommand } from './schema';
import { configCheckCommand, initCommand } from './config';
import { demoCommand } from './demo';
import { judgeRunCommand, rewardBacktestCommand, rewardCasesCommand, rewardRunCommand } from './reward';
import { execCommand, hostsCheckCommand, hostsListCommand, hostsStatusCommand } from './hosts';
import { metricsCommand } from './metrics';
import { checkpointsCommand, downloadCommand, mergeCommand } from './checkpoints';
import { serveCommand, servicesListCommand, servicesRestartCommand, servicesStopCommand } from './services';
import { cancelCommand, logsCommand, runsCommand, runsDiffCommand, runsRerunCommand, runsShowCommand, submitCommand } from './runs';
import { datasetConvertCommand, datasetInspectCommand } from './dataset';
import { episodesCommand } from './episodes';
import { phiRedactCommand, phiScanCommand } from './phi';
import { reviewExportCommand, reviewStatsCommand } from './review';
import { trustCommand } from './trust';

/** Every `medrl` subcommand; a feature adds its commands here. */
export const commands: Command[] = [
  initCommand,
  demoCommand,
  configCheckCommand,
  trustCommand,
  hostsListCommand,
  hostsStatusCommand,
  hostsCheckCommand,
  execCommand,
  datasetInspectCommand,
  datasetConvertCommand,
  schemaCommand,
  rewardRunCommand,
  rewardCasesCommand,
  rewardBacktestCommand,
  judgeRunCommand,
  checkpointsCommand,
  mergeCommand,
  downloadCommand,
  serveCommand,
  servicesListCommand,
  servicesStopCommand,
  servicesRestartCommand,
  metricsCommand,
  submitCommand,
  runsCommand,
  runsShowCommand,
  runsDiffCommand,
  runsRerunCommand,
  cancelCommand,
  logsCommand,
  episodesCommand,
  phiScanCommand,
  phiRedactCommand,
  reviewStatsCommand,
  reviewExportCommand,
];
