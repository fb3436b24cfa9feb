"""Examination-recommendation reward (DiagAgent-style): set F1 between the examinations a model recommends and the
examinations the case actually needed.

verl signature. The recommendations are the items of the last <exams>...</exams> block, else the lines after
"Recommended examinations:", one per line or separated by commas/semicolons (bullets and numbering ignored), else the
DiagAgent seed's asking turns: each line with "needed:" or "performed:" ("...the following investigation(s) should be
performed: X") gives one examination, the text after it with full stops removed (as the seed's rollout reads it).
`ground_truth` is a list of names or one string separated the same way. Names are compared after lower-casing, dropping
punctuation and mapping common abbreviations (CBC, CT, ECG/EKG, CXR, ...). Returns score = F1 plus precision, recall
and the matched / missed / extra examinations, each one string joined by "; " (verl collates extra values into arrays
and averages them: lists of different lengths crash it). Every sample gets the same keys, each always a number or
always a string, never None or a list: verl's reward manager appends each key per sample and its validation checks
every key has one value per sample and averages them (verl/workers/reward_manager/naive.py,
verl/trainer/ppo/ray_trainer.py _validate, metric_utils.process_validation_metrics).
"""
import re

SYNONYMS = {
    "cbc": "complete blood count", "full blood count": "complete blood count", "fbc": "complete blood count",
    "ecg": "electrocardiogram", "ekg": "electrocardiogram", "electrocardiography": "electrocardiogram",
    "cxr": "chest x ray", "chest xray": "chest x ray", "chest radiograph": "chest x ray", "chest radiography": "chest x ray",
    "ct": "computed tomography", "ct scan": "computed tomography", "mri": "magnetic resonance imaging",
    "bmp": "basic metabolic panel", "cmp": "comprehensive metabolic panel", "lft": "liver function tests",
    "lfts": "liver function tests", "ua": "urinalysis", "abg": "arterial blood gas", "crp": "c reactive protein",
    "esr": "erythrocyte sedimentation rate", "tsh": "thyroid stimulating hormone", "hba1c": "hemoglobin a1c",
    "echo": "echocardiogram", "echocardiography": "echocardiogram", "us": "ultrasound", "ultrasonography": "ultrasound",
}
_TAG = re.compile(r"<exams>(.*?)</exams>", re.IGNORECASE | re.DOTALL)
_SEED_MARKERS = ("needed:", "performed:")  # the seed's order (extract_examination_name in its vllm rollout)
_HEADER = re.compile(r"recommended (?:examinations|exams|tests)\s*:\s*(.*)", re.IGNORECASE | re.DOTALL)


def normalise(name):
    text = re.sub(r"[^a-z0-9]+", " ", str(name).lower()).strip()
    words = text.split()
    # "ct abdomen" -> "computed tomography abdomen": map a leading abbreviation too.
    if words and words[0] in SYNONYMS and " ".join(words) not in SYNONYMS:
        return " ".join([SYNONYMS[words[0]]] + words[1:])
    return SYNONYMS.get(text, text)


def split_items(text):
    items = []
    for part in re.split(r"[\n;,]", text):
        part = re.sub(r"^\s*(?:[-*•]|\d+[.)])\s*", "", part).strip()
        if part:
            items.append(part)
    return items


def recommended(solution_str):
    text = solution_str or ""
    found = _TAG.findall(text)
    if found:
        return split_items(found[-1])
    header = _HEADER.search(text)
    if header:
        return split_items(header.group(1))
    return seed_requests(text)


def seed_requests(text):
    """The examinations the seed's turns ask for, one per line with "needed:" or "performed:", in order."""
    names = []
    for line in text.split("\n"):
        for marker in _SEED_MARKERS:
            if marker in line:
                name = line.split(marker, 1)[1].replace(".", "").strip()
                if name:
                    names.append(name)
                break
    return names


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    truth = ground_truth if isinstance(ground_truth, (list, tuple)) else split_items(str(ground_truth or ""))
    want = {normalise(x) for x in truth if str(x).strip()}
    got = {normalise(x) for x in recommended(solution_str)}
    matched = want & got
    precision = len(matched) / len(got) if got else 0.0
    recall = len(matched) / len(want) if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"score": f1, "precision": precision, "recall": recall, "matched": "; ".join(sorted(matched)),
            "missed": "; ".join(sorted(want - got)), "extra": "; ".join(sorted(got - want))}
