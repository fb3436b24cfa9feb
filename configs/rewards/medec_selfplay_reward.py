"""MEDEC self-play reward: the assessor for finding and correcting the error, the attacker for the errors it misses.

verl signature; the game comes from configs/agents/medec_selfplay_loop.py, whose extra_fields.medec_game verl's reward
loop (0.7+) merges into extra_info. Zero-sum, as in Self-RedTeam (arXiv 2506.07468), which the seed follows:
- assessor: medec_error_detection's score of its verdict against the note it saw, in [0, 1]: for a note with an error
  0.4 for flagging it, + 0.3 for the sentence id, + 0.3 x word-F1 of its correction; for a correct note 1 when it is
  not flagged. The truth is MEDEC's for a vanilla game; for an accepted attack it is the attacker's edit (the sentence
  it changed; the correction is the original sentence, or MEDEC's correction when it rewrote MEDEC's error);
- attacker: 1 - the assessor's score when its edit stands, -1 when the referee refused the move or the judge finds no
  medical error in it (a harmless paraphrase must not win).
The judge (MEDRL_JUDGE_URL/_MODEL, the spec's services.judge; the seed's medical_judge) is asked whether an accepted
edit states something medically wrong; a judge that cannot be reached leaves the edit as the referee accepted it
(judge_ok 0); with no judge set, edits are not judged (attack_judged 0 on every sample: watch it in the charts).

Keys on every sample: score, game_role, game_mode, attack_valid, attack_judged, judge_ok, assessor_score, and the
assessor's verdict read as medec_error_detection reads it (format, pred_flag, pred_sentence, pred_correction,
sentence_ok, correction_f1); in an attacker's sample the verdict is its opponent's (0 and -1 when there was none).
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from medec_error_detection import compute_score as detection_score, reference  # noqa: E402  (beside this file)
from medrl_judge import ask_judge  # noqa: E402

JUDGE_PROMPT = """A sentence of a clinical note was edited. Decide whether the edited sentence states something medically \
wrong (a wrong diagnosis, management, treatment, drug or dose, or causal organism) compared with the correct sentence. \
A rewording that means the same is not an error.

Correct sentence: {correct}
Edited sentence: {edited}

Answer with one word: Yes (the edited sentence is medically wrong) or No."""

_NO_VERDICT = {"format": 0.0, "pred_flag": -1, "pred_sentence": -1, "pred_correction": "", "sentence_ok": 0.0,
               "correction_f1": 0.0}


def judged_error(correct, edited):
    """(is an error, judged, judge reached): the judge's word on an edit; (True, 0, 1) with no judge configured."""
    if not os.environ.get("MEDRL_JUDGE_URL"):
        return True, 0.0, 1.0
    try:
        answer = ask_judge(JUDGE_PROMPT.format(correct=correct, edited=edited), max_tokens=16)
    except RuntimeError as error:
        # The message names the server and the failure, never the note.
        print(f"medec_selfplay_reward: judge failed, edit left as the referee accepted it: {error}", file=sys.stderr)
        return True, 0.0, 0.0
    return re.match(r"\W*yes\b", answer.strip(), re.I) is not None, 1.0, 1.0


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    info = extra_info or {}
    game = info.get("medec_game")
    if not isinstance(game, dict):
        raise ValueError("extra_info has no medec_game: this reward scores games played by configs/agents/"
                         "medec_selfplay_loop.py (the spec's rollout.agentLoop, verl 0.7+); for single-role MEDEC rows "
                         "use medec_error_detection.py")
    role, mode = game["role"], game["mode"]
    valid, judged, judge_ok = float(game["attack_valid"]), 0.0, 1.0
    truth = ground_truth
    if mode.startswith("adversarial") and valid:
        flag, sentence, correction = reference(ground_truth, info)
        correct = correction if flag == 1 else game["original_sentence"]
        is_error, judged, judge_ok = judged_error(correct, game["new_sentence"])
        if is_error:
            truth = {"error_flag": 1, "error_sentence_id": game["sentence_id"], "corrected_sentence": correct}
        else:
            # No error was planted (or the rewrite removed MEDEC's): the note the assessor read is correct.
            valid, truth = 0.0, {"error_flag": 0, "error_sentence_id": -1, "corrected_sentence": None}
    played = role == "assessor" or game["attack_valid"]
    verdict = detection_score(data_source, solution_str if role == "assessor" else game["assessor_reply"], truth,
                              info) if played else {"score": 0.0, **_NO_VERDICT}
    assessor_score = verdict.pop("score")
    if role == "assessor":
        score = assessor_score
    else:
        score = 1.0 - assessor_score if valid else -1.0
    return {"score": round(score, 6), "game_role": role, "game_mode": mode, "attack_valid": valid,
            "attack_judged": judged, "judge_ok": judge_ok, "assessor_score": assessor_score, **verdict}
