"""Medical error detection and correction reward (MEDEC; the self-play assessor's task).

verl signature. `ground_truth` is the MEDEC row's answer: {"error_flag": 0|1, "error_sentence_id": int (-1 when none),
"corrected_sentence": str|null} (the CSV columns Error Flag, Error Sentence ID, Corrected Sentence), or, as MedRL's
dataset converter writes MEDEC (the demo's data/medec/verl), the error flag alone ("1"/"0") with the sentence id and
the correction in extra_info["Error Sentence ID"] and extra_info["Corrected Sentence"] ("NA" when none). The response
is either the MEDEC submission form "<sentence id> <corrected sentence>" / "CORRECT", or labelled lines: "Error:
yes|no" (or "Error flag: 1|0", or "<answer>1|0</answer>" as the demo's prompt asks), "Sentence: <id>", "Correction:
<text>". Score for a text with an error: 0.4 for flagging it, + 0.3 for the right sentence id, + 0.3 x word-F1 of the
correction against the reference correction. For a correct text: 1.0 when it is not flagged, else 0.0. Returns score,
format (0.0 when the response cannot be read), pred_flag (-1 when unreadable), pred_sentence (-1 when none),
pred_correction ("" when none), sentence_ok and correction_f1 (0.0 when not applicable). Every sample gets the same
keys, each always a number or always a string, never None or a list: verl's reward manager appends each key per sample
and its validation checks every key has one value per sample and averages them (verl/workers/reward_manager/naive.py,
verl/trainer/ppo/ray_trainer.py _validate, metric_utils.process_validation_metrics).
"""
import re

_FLAG = re.compile(r"^\s*error(?: flag)?\s*:\s*(yes|no|true|false|1|0)\b", re.I | re.M)
_SENTENCE = re.compile(r"^\s*(?:error )?sentence(?: id)?\s*:\s*(-?\d+)", re.I | re.M)
_CORRECTION = re.compile(r"^\s*correct(?:ion|ed sentence)\s*:\s*(.+)$", re.I | re.M)
_SUBMISSION = re.compile(r"^\s*(\d+)\s+(\S.*)$", re.S)
_ANSWER = re.compile(r"<answer>\s*([01])\s*</answer>", re.I)


def parse(solution_str):
    """(flag, sentence id, correction) from a response; flag None when it cannot be read."""
    text = (solution_str or "").strip()
    if re.fullmatch(r"correct\.?", text, re.I):
        return 0, -1, None
    flag = _FLAG.search(text) or _ANSWER.search(text)
    if flag:
        sentence = _SENTENCE.search(text)
        correction = _CORRECTION.search(text)
        return (1 if flag.group(1).lower() in ("yes", "true", "1") else 0,
                int(sentence.group(1)) if sentence else -1,
                correction.group(1).strip() if correction else None)
    submission = _SUBMISSION.match(text)
    if submission:
        return 1, int(submission.group(1)), submission.group(2).strip()
    return None, -1, None


def word_f1(a, b):
    wa, wb = re.findall(r"[a-z0-9]+", (a or "").lower()), re.findall(r"[a-z0-9]+", (b or "").lower())
    if not wa or not wb:
        return 0.0
    common = sum(min(wa.count(w), wb.count(w)) for w in set(wa))
    if not common:
        return 0.0
    precision, recall = common / len(wa), common / len(wb)
    return 2 * precision * recall / (precision + recall)


def reference(ground_truth, extra_info):
    """(error flag, sentence id, corrected sentence) from either ground-truth shape (see the module docstring)."""
    if isinstance(ground_truth, dict):
        return int(ground_truth["error_flag"]), int(ground_truth.get("error_sentence_id", -1)), ground_truth.get("corrected_sentence")
    info = extra_info or {}
    correction = info.get("Corrected Sentence", info.get("corrected_sentence"))
    sentence = info.get("Error Sentence ID", info.get("error_sentence_id", -1))
    return int(str(ground_truth).strip()), int(sentence), None if correction in (None, "", "NA") else correction


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    truth_flag, truth_sentence, truth_correction = reference(ground_truth, extra_info)
    flag, sentence, correction = parse(solution_str)
    detail = {"pred_flag": -1 if flag is None else flag, "pred_sentence": sentence, "pred_correction": correction or "",
              "sentence_ok": 0.0, "correction_f1": 0.0}
    if flag is None:
        return {"score": 0.0, "format": 0.0, **detail}
    if truth_flag == 0:
        return {"score": 1.0 if flag == 0 else 0.0, "format": 1.0, **detail}
    if flag == 0:
        return {"score": 0.0, "format": 1.0, **detail}
    sentence_ok = sentence == truth_sentence
    similarity = word_f1(correction, truth_correction)
    detail.update(sentence_ok=1.0 if sentence_ok else 0.0, correction_f1=round(similarity, 6))
    return {"score": round(0.4 + 0.3 * sentence_ok + 0.3 * similarity, 6), "format": 1.0, **detail}
