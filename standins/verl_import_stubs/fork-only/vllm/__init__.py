"""Import-only stand-in for vllm, on the path for the DiagAgent fork alone: its ray_trainer imports metric_utils, which
imports vllm.sequence at module level (see ../../README.md). Upstream verl imports vllm lazily, so it never sees this."""
