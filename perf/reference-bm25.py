"""A minimal driver doing what the public Resource2Skill code does for one wiki query.

Written for skillsmith's benchmark from the reference's documented behaviour (its
``core/skill_wiki/bm25.py`` and registry), not copied: read the domain's registry (one JSON file
holding every entry, as the reference's ``index.json``), score every entry with Okapi BM25 over
skill name, applicability and tags (lowercase ``[a-z0-9]+`` tokens, k1 1.5, b 0.75,
idf ln(1 + (N - df + 0.5) / (df + 0.5)), entries without a token left out), multiply the scores
of entries with a visual by 1.25, and print the best ``pool`` ids as JSON.

    python3 perf/reference-bm25.py <index.json> <query> [pool]
"""
import json
import math
import re
import sys

WORD = re.compile(r"[a-z0-9]+")


def words(text):
    return WORD.findall(text.lower())


def main():
    registry, query = sys.argv[1], sys.argv[2]
    pool = int(sys.argv[3]) if len(sys.argv) > 3 else 25
    with open(registry, encoding="utf-8") as handle:
        entries = json.load(handle)["entries"]
    documents = []
    frequency = {}
    total = 0
    for entry in entries:
        text = " ".join(
            [entry.get("skill_name") or "", entry.get("applicability") or "", " ".join(entry.get("tags") or [])]
        )
        counts = {}
        length = 0
        for word in words(text):
            counts[word] = counts.get(word, 0) + 1
            length += 1
        if length == 0:
            continue
        for word in counts:
            frequency[word] = frequency.get(word, 0) + 1
        total += length
        documents.append((entry, length, counts))
    if not documents:
        print("[]")
        return
    average = total / len(documents)
    terms = list(dict.fromkeys(words(query)))
    k1, b = 1.5, 0.75
    scored = []
    for entry, length, counts in documents:
        score = 0.0
        for term in terms:
            tf = counts.get(term)
            if not tf:
                continue
            df = frequency[term]
            idf = math.log(1.0 + (len(documents) - df + 0.5) / (df + 0.5))
            score += idf * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * length / average))
        if score <= 0.0:
            continue
        if "visual" in (entry.get("modalities_present") or []):
            score *= 1.25
        scored.append((score, entry["skill_id"]))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    print(json.dumps([[skill_id, score] for score, skill_id in scored[:pool]]))


if __name__ == "__main__":
    main()
