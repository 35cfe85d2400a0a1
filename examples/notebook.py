# notebook.py — jsmf from Python, cell by cell (# %% cells run in Jupyter, VS Code or plain
# `python3 examples/notebook.py`): documents held in Python into a store, a fit, the arrays,
# topics, the refinement, theta, the sklearn way, pyLDAvis's inputs and a refit. Install:
# `make install-python`, then build/venv/bin/python examples/notebook.py (README, "Python").
# %%
import os
import subprocess
import tempfile

import numpy as np

import jsmf

here = os.path.dirname(os.path.abspath(__file__))
work = tempfile.mkdtemp(prefix="jsmf-notebook-")
text = subprocess.run(["zstd", "-dc", os.path.join(here, "kjv-passages.txt.zst")],
                      capture_output=True, check=True).stdout.decode()
docs = text.splitlines()                         # any iterable of strings (or token lists)
print(len(docs), "documents")

# %% A vocabulary by the rules of `jsmf vocab` (stopwords, min df 5, max df 50%)
words, df, tf = jsmf.count_vocabulary(docs)
print(len(words), "words; most frequent:", words[:8])

# %% Ingest: streamed, one document at a time; Ctrl-C checkpoints, the same call resumes
store = jsmf.Store(os.path.join(work, "store"))
store.ingest(docs, vocabulary=words)
print({k: v for k, v in store.info().items() if k in ("docs", "tokens", "nnz", "n_words")})

# %% Fit: B, A, alpha, anchors are numpy arrays over the library's memory (no copy)
model = jsmf.fit(store, k=20, levels=(5,), out=os.path.join(work, "model"))
print(model, model.B.shape, model.A.shape, "anchors:", model.vocabulary[model.anchors][:5])
for t, top in enumerate(model.top_words(8)):
    print("%2d %5.1f%%  %s" % (t, 100 * model.topic_sizes[t], " ".join(top)))

# %% The refinement: the topics refined over the documents the store holds (LDA's likelihood
# climbed from the fit; jsmf's best held-out quality). Also jsmf.fit(store, k=20, refine=80),
# or model.refine(files or a doc-term count matrix)
refined = model.refine(store)
print(refined, "log-likelihood per token of every 10th document: fit %.3f, refined %.3f" % (
    model.eval(docs=docs[::10])["heldout_ll"], refined.eval(docs=docs[::10])["heldout_ll"]))

# %% Topic mixtures of new documents
theta = model.infer(["And the LORD spake unto Moses, saying", "Jesus answered and said unto them"])
print(np.round(theta, 2))

# %% The metrics of `jsmf eval`, the HTML report, the model directory the CLI reads
print({k: round(v, 4) for k, v in model.eval(store=store, docs=docs[::10]).items()
       if isinstance(v, float)})
model.report(os.path.join(work, "report.html"))
same = jsmf.load(os.path.join(work, "model"))

# %% The sklearn way: a Pipeline after CountVectorizer (what LatentDirichletAllocation takes)
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import Pipeline
pipe = Pipeline([("counts", CountVectorizer(min_df=5, max_df=0.5, stop_words="english")),
                 ("topics", jsmf.JSMF(n_components=20))])
theta = pipe.fit_transform(docs)
print("pipeline theta", theta.shape, "components_", pipe.named_steps["topics"].components_.shape)

# %% pyLDAvis: pyLDAvis.prepare(**args) (one pseudo-document carries p(z): see the README)
args = model.to_pyldavis(store)
print({k: np.shape(v) for k, v in args.items()})

# %% Tomorrow: more documents, a refit that keeps topic numbers, and what changed
store.ingest(docs[:500], name="day2")
model2 = jsmf.fit(store, k=20, out=os.path.join(work, "model2"),
                  previous=os.path.join(work, "model"))
d = jsmf.diff(model, model2)
print(d["continuing"], "topics continue,", d["new"], "new,", d["retired"], "retired")
