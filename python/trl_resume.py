"""MedRL Studio: `trl sft|grpo|dpo ARGS` that really resumes from `--resume_from_checkpoint`.

TRL's training scripts (trl/scripts/{sft,grpo,dpo}.py, TRL 1.10) call `trainer.train()` without `resume_from_checkpoint`,
so the flag (a transformers TrainingArguments field) is parsed and then ignored: the run would start again from step 0.
MedRL uploads this file into the run folder of a run that resumes and starts `python3 trl_resume.py SUB ARGS` in place of
`trl SUB ARGS`. In that first process it is TRL's own CLI (trl.cli.main: the same flags, `--accelerate_config`,
`--num_processes`, `--config`) with one change: accelerate starts this file in every training process instead of
trl/scripts/SUB.py. There, `Trainer.train()` takes `resume_from_checkpoint` from `args.resume_from_checkpoint` when the
caller gives none, and TRL's script then runs unchanged as __main__.
"""
import os
import runpy
import sys

# Set by the CLI process for the training processes accelerate starts (they inherit its environment).
SCRIPT_ENV = "MEDRL_TRL_SCRIPT"


def train_process(command):
    import transformers

    train = transformers.Trainer.train

    def train_resuming(self, *args, **kwargs):
        if not args and kwargs.get("resume_from_checkpoint") is None and self.args.resume_from_checkpoint:
            kwargs["resume_from_checkpoint"] = self.args.resume_from_checkpoint
            print(f"MedRL: resuming from {self.args.resume_from_checkpoint}", flush=True)
        return train(self, *args, **kwargs)

    transformers.Trainer.train = train_resuming
    runpy.run_module(f"trl.scripts.{command}", run_name="__main__", alter_sys=True)


def cli(argv):
    try:
        # TRL 1.x: trl/cli/commands/training.py calls accelerate_launcher.launch_training_script(script_name,
        # launch_args, training_script_args), looked up on the module when a command runs.
        import trl.cli.accelerate_launcher as launcher
        from trl.cli import main
    except ImportError as err:
        sys.exit(f"MedRL: resuming a TRL run needs TRL 1.x's CLI (trl.cli.accelerate_launcher; checked on TRL 1.10): {err}")

    def launch_this_file(script_name, launch_args, training_script_args, **_):
        os.environ[SCRIPT_ENV] = script_name[: -len(".py")] if script_name.endswith(".py") else script_name
        parsed = launcher.launch_command_parser().parse_args(launch_args + [os.path.abspath(__file__)] + training_script_args)
        launcher.launch_command(parsed)

    launcher.launch_training_script = launch_this_file
    return main(argv)


if __name__ == "__main__":
    script = os.environ.pop(SCRIPT_ENV, None)
    if script:
        train_process(script)
    else:
        sys.argv[0] = "trl"
        sys.exit(cli(sys.argv[1:]))
