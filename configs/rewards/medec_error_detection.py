"""Medical error detection and correction reward (MEDEC; the self-play assessor's task).

verl signature. `ground_truth` is the MEDEC row's answer: {"error_flag": 0|1, "error_sentence_id": int (-1 when none),
"corrected_sentence": str|null} (the CSV columns Error Flag, Error Sentence ID, Corrected Sentence).
The response is either the MEDEC submission form "<sentence id> <corrected sentence>" / "CORRECT", or labelled lines:
"Error: yes|no" (or "Error flag: 1|0"), "Sentence: <id>", "Correction: <text>".
Score for a text with an error: 0.4 for flagging it, + 0.3 for the right sentence id, + 0.3 x word-F1 of the correction
against the reference correction. For a correct text: 1.0 when it is not flagged, else 0.0.
"""
import re

_FLAG = re.compile(r"^\s*error(?: flag)?\s*:\s*(yes|no|true|false|1|0)\b", re.I | re.M)
_SENTENCE = re.compile(r"^\s*(?:error )?sentence(?: id)?\s*:\s*(-?\d+)", re.I | re.M)
_CORRECTION = re.compile(r"^\s*correct(?:ion|ed sentence)\s*:\s*(.+)$", re.I | re.M)
_SUBMISSION = re.compile(r"^\s*(\d+)\s+(\S.*)$", re.S)


def parse(solution_str):
    """(flag, sentence id, correction) from a response; flag None when it cannot be read."""
    text = (solution_str or "").strip()
    if re.fullmatch(r"correct\.?", text, re.I):
        return 0, -1, None
    flag = _FLAG.search(text)
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


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    truth_flag = int(ground_truth["error_flag"])
    flag, sentence, correction = parse(solution_str)
    detail = {"pred_flag": flag, "pred_sentence": sentence, "pred_correction": correction}
    if flag is None:
        return {"score": 0.0, "format": 0.0, **detail}
    if truth_flag == 0:
        return {"score": 1.0 if flag == 0 else 0.0, "format": 1.0, **detail}
    if flag == 0:
        return {"score": 0.0, "format": 1.0, **detail}
    sentence_ok = sentence == int(ground_truth["error_sentence_id"])
    similarity = word_f1(correction, ground_truth.get("corrected_sentence"))
    return {"score": round(0.4 + 0.3 * sentence_ok + 0.3 * similarity, 6), "format": 1.0, "sentence_ok": sentence_ok,
            "correction_f1": round(similarity, 6), **detail}
