import type { HostPool } from '../../core/remote/host-pool';
import type { RunSpec } from '../../core/runs/run-spec';
import type { RunEnv } from '../../core/runs/launch-script';
import { listServices, serviceStatus } from '../../core/services/services';
import { runServiceEnv, serviceEndpoint, type Endpoint } from '../../core/services/run-env';
import type { WorkspaceConfigState } from '../config/workspace-config-state';
import { workspaceHosts } from '../checkpoints/checkpoints-tree';
import type { ServiceKeys } from './service-keys';

/**
 * The runs feature's env provider: each service the spec names is the newest running service of that name on its
 * host (the spec's `services.<name>.host`, else the run's host), with its key from SecretStorage; judges from medrl.yaml.
 */
export function serviceRunEnv(state: WorkspaceConfigState, pool: HostPool, keys: ServiceKeys): (spec: RunSpec) => Promise<RunEnv> {
  return async (spec) => {
    const config = state.config;
    if (!config) return { vars: {}, secrets: {} };
    const running: Record<string, Endpoint> = {};
    const hosts = workspaceHosts(state);
    for (const [name, s] of Object.entries(spec.services ?? {})) {
      if (s.judge) continue;
      const h = hosts.find((x) => x.name === (s.host ?? spec.host ?? config.defaults.host));
      if (!h) continue; // runServiceEnv reports the service as not running, with its name
      const host = await pool.get(h.name);
      for (const svc of await listServices(host, h.runsDir)) {
        if (svc.name !== name) continue;
        const st = await serviceStatus(host, svc, undefined);
        if (st.state === 'failed' || st.state === 'stopped') continue;
        running[name] = serviceEndpoint(svc.port, svc.servedModelName, await keys.get(svc));
        break;
      }
    }
    const env = runServiceEnv(spec, config, running);
    return { vars: env.env, secrets: env.secretEnv };
  };
}
