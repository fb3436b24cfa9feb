"""The DiagAgent seed's reward (verl/utils/reward_score/diagnose.py of the diagagent fork), as a verl reward function.

score = dialogue_complete_reward + outcome_accuracy_reward + exam_recommendation_reward, as the seed computes them:
- dialogue_complete_reward: 0.1 when the output contains "The available information is sufficient to make a
  diagnosis" (the seed's final-answer sentence). Like the seed, the prediction is the text after the first
  "...diagnosis." (with the full stop) up to "Reason:", stripped, label included ("Diagnosis: X"), and when the sentence
  has no full stop both this and the accuracy are 0 (the seed's split fails and its except sets both to 0).
- outcome_accuracy_reward: the judge's verdict (1/0) with the seed's INSTRUCTION prompt, verbatim; not asked without
  the sentence.
- exam_recommendation_reward: 0.5 x F1 between extra_info["key_exam_names"] and the examination history, names matched
  by the judge with the seed's two count prompts (verbatim, lists written as Python lists), the first integer of each
  answer clamped to [0, len(list)]; both lists empty: F1 1.0, one empty: 0.0, as the seed.
The examination history is extra_info["examination_history"] when present (configs/agents/exam_simulator_loop.py puts
it there on verl 0.8+), else read from the transcript: each line with "needed:" or "performed:" gives the text after it,
full stops removed, stripped (how the seed's rollout names the examination an assistant turn asks for).

Differs from the seed: the verdict is the first whole word "correct" or "wrong" ("incorrect" counts as wrong; the seed's
`'correct' in response.lower()` counts "Incorrect" as correct), no verdict scores 0 with judge_ok 0 and no integer
counts 0 with judge_ok 0 (the seed retries those); MEDRL_EXAM_MATCH=direct switches to the seed's exact lower-cased
matching (_calculate_direct_f1) without judge calls (default "llm", the seed's choice); retries are medrl_judge's
(429/5xx/dropped connections) and a judge that keeps failing raises instead of scoring 0.

Keys for every sample (each always a number or always a string: verl averages each key): score,
dialogue_complete_reward, outcome_accuracy_reward, exam_recommendation_reward, exam_f1, pred (the text judged, "" when
not asked), exams (the examinations asked for, joined by "; "), judge_ok (1.0 unless a judge answer could not be read).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exam_recommendation_f1 import seed_requests  # noqa: E402  (beside this file too)
from medrl_judge import ask_judge  # noqa: E402  (the helper next to this file)

SENTENCE = "The available information is sufficient to make a diagnosis"

# The seed's judge prompt, verbatim (verl/utils/reward_score/diagnose.py INSTRUCTION).
INSTRUCTION = '''# Task Description
You are a professional medical diagnosis evaluation system. Now, you will receive two diagnosis results: one is the diagnosis predicted by the model ([pred_diag]), and the other is the verified correct diagnosis ([gt_diag]). Your task is to judge whether the model-predicted diagnosis([pred_diag]) is correct.

When evaluating, please consider the following factors:
1.The same disease may have multiple aliases, for example, “Heart disease” may also be called “Cardiac disease”.
2.There may be diversity in language expression, for example, “heart attack” and “myocardial infarction” may refer to the same disease.
3.Only judge whether the diagnosis result is correct, information such as the cause of the disease, symptoms, and treatment recommendations are not included in the evaluation scope.
4.If the correct diagnosis[gt_diag] is included in the predicted diagnosis but some additional complications are mentioned, it is also considered correct

# Output Requirements
Only output your judgment result on the model-predicted [pred_diag] as “Correct|Wrong”, do not output any other content.

# Format to Follow:
[Correct|Wrong]

Below is the diagnosis result predicted by the model and the correct diagnosis:
[pred_diag]
{pred_diag}

[gt_diag]
{gt_diag}'''

# The seed's two count prompts, verbatim (_calculate_llm_precision_matches / _calculate_llm_recall_matches).
PRECISION_PROMPT = """
Please determine how many of the recommended exams appear in the key exam list. Note that even if the expressions are different, if they refer to the same examination, they should be considered as matches.

Key exam list: {key_exam_names}
Recommended exam list: {recommended_exam_names}

Please analyze each item in the recommended exam list and determine if it has a corresponding item in the key exam list (even with different expressions).

Please only output the number of matches as an integer. For example: 3
"""

RECALL_PROMPT = """
Please determine how many of the key exams appear in the recommended exam list. Note that even if the expressions are different, if they refer to the same examination, they should be considered as matches.

Key exam list: {key_exam_names}
Recommended exam list: {recommended_exam_names}

Please analyze each item in the key exam list and determine if it has a corresponding item in the recommended exam list (even with different expressions).

Please only output the number of matches as an integer. For example: 2
"""

# "incorrect" is listed so that it counts as wrong: the seed's `'correct' in response.lower()` scores it 1.
_VERDICT = re.compile(r"\b(correct|incorrect|wrong)\b", re.IGNORECASE)
_INTEGER = re.compile(r"\d+")


def verdict(answer):
    """1 / 0 for the first whole word "correct" / "wrong" (or "incorrect") in the judge's answer, None without one."""
    match = _VERDICT.search(answer or "")
    if not match:
        return None
    return 1 if match.group(1).lower() == "correct" else 0


def _names(value):
    """A list of names from a list, tuple or numpy array (parquet gives arrays); None stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        return [value] if value.strip() else []
    return [str(x) for x in list(value)]


def examination_history(solution_str, extra_info):
    """extra_info["examination_history"] when present, else the examinations the transcript's turns ask for."""
    given = _names((extra_info or {}).get("examination_history"))
    return given if given is not None else seed_requests(solution_str or "")


def direct_f1(key_exam_names, recommended_exam_names):
    """The seed's _calculate_direct_f1: sets of lower-cased, stripped names."""
    if not key_exam_names and not recommended_exam_names:
        return 1.0
    if not key_exam_names or not recommended_exam_names:
        return 0.0
    key_set = {exam.lower().strip() for exam in key_exam_names}
    recommended_set = {exam.lower().strip() for exam in recommended_exam_names}
    intersection = key_set & recommended_set
    precision = len(intersection) / len(recommended_set)
    recall = len(intersection) / len(key_set)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def _count(prompt, most):
    """The first integer of the judge's answer clamped to [0, most], and whether there was one."""
    numbers = _INTEGER.findall(ask_judge(prompt).strip())
    if not numbers:
        return 0, False
    return max(0, min(int(numbers[0]), most)), True


def llm_f1(key_exam_names, recommended_exam_names):
    """The seed's _calculate_llm_f1 (lists, not sets, as the seed), and whether both counts were read."""
    if not key_exam_names and not recommended_exam_names:
        return 1.0, True
    if not key_exam_names or not recommended_exam_names:
        return 0.0, True
    lists = {"key_exam_names": key_exam_names, "recommended_exam_names": recommended_exam_names}
    precision_matches, ok_p = _count(PRECISION_PROMPT.format(**lists), len(recommended_exam_names))
    recall_matches, ok_r = _count(RECALL_PROMPT.format(**lists), len(key_exam_names))
    precision = precision_matches / len(recommended_exam_names)
    recall = recall_matches / len(key_exam_names)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return f1, ok_p and ok_r


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    output = solution_str or ""
    judge_ok = 1.0
    dialogue_complete_reward, outcome_accuracy_reward, pred = 0.0, 0.0, ""
    if SENTENCE in output:
        parts = output.split(SENTENCE + ".")
        if len(parts) > 1:  # the seed: without the full stop its split fails and both rewards are 0
            dialogue_complete_reward = 0.1
            pred = parts[1].split("Reason:")[0].strip()
            found = verdict(ask_judge(INSTRUCTION.format(pred_diag=pred, gt_diag=ground_truth)))
            if found is None:
                judge_ok = 0.0
            outcome_accuracy_reward = float(found or 0)

    key_exam_names = _names((extra_info or {}).get("key_exam_names"))
    if key_exam_names is None:
        raise ValueError('extra_info["key_exam_names"] is missing: the seed\'s data (examples/diagnose.py) puts the '
                         "case's key examinations there")
    exams = examination_history(output, extra_info)
    method = os.environ.get("MEDRL_EXAM_MATCH", "llm").strip().lower() or "llm"
    if method == "direct":
        exam_f1 = direct_f1(key_exam_names, exams)
    elif method == "llm":
        exam_f1, counts_ok = llm_f1(key_exam_names, exams)
        if not counts_ok:
            judge_ok = 0.0
    else:
        raise ValueError(f"MEDRL_EXAM_MATCH must be 'llm' or 'direct', not {method!r}")
    exam_recommendation_reward = 0.5 * exam_f1

    return {
        "score": dialogue_complete_reward + outcome_accuracy_reward + exam_recommendation_reward,
        "dialogue_complete_reward": dialogue_complete_reward,
        "outcome_accuracy_reward": outcome_accuracy_reward,
        "exam_recommendation_reward": exam_recommendation_reward,
        "exam_f1": float(exam_f1),
        "pred": pred,
        "exams": "; ".join(exams),
        "judge_ok": judge_ok,
    }
