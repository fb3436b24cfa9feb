/** The medrl.yaml that `medrl init` and "MedRL: Create medrl.yaml" write: valid as is, with the rest shown in comments. */
export const STARTER_CONFIG = `# MedRL Studio workspace file. Reference: docs/configuration.md, section "medrl.yaml".
version: 1

hosts:
  local: {}            # built in: runs jobs as local processes, no GPU needed
  # gpu-box:           # an alias from ~/.ssh/config (HostName, User, ProxyJump... come from there)
  #   runsDir: ~/.medrl/runs
  #   setup: ["source ~/miniconda3/bin/activate verl"]
  #   scheduler: ssh   # or slurm, ray

judges: {}
  # judge:
  #   url: http://127.0.0.1:8000/v1
  #   model: Qwen2.5-72B-Instruct
  #   host: gpu-box    # the port is forwarded over this host's SSH connection

datasets:
  - path: data

defaults:
  host: local
`;
