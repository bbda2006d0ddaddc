"""Prints the run-log identity of a BM25 retriever built from fixed documents, for
test_trust_runner (argv: framework, top-k)."""

import sys
import warnings

from ranklens.capture import as_retriever

warnings.simplefilter("ignore")

fw = sys.argv[1]
docs = {f"d{i}": f"text number {i} about topic {i % 7}" for i in range(50)}
if fw == "llamaindex":
    from llama_index.core.schema import TextNode
    from llama_index.retrievers.bm25 import BM25Retriever

    r = BM25Retriever.from_defaults(
        nodes=[TextNode(text=t, id_=d) for d, t in docs.items()], similarity_top_k=int(sys.argv[2])
    )
elif fw == "langchain":
    from langchain_core.documents import Document
    from ranklens_langchain.bm25 import BM25sRetriever

    r = BM25sRetriever.from_documents(
        [Document(page_content=t, id=d) for d, t in docs.items()], k=int(sys.argv[2])
    )
else:
    from haystack import Document
    from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
    from haystack.document_stores.in_memory import InMemoryDocumentStore

    st = InMemoryDocumentStore()
    st.write_documents([Document(content=t, id=d) for d, t in docs.items()])
    r = InMemoryBM25Retriever(st, top_k=int(sys.argv[2]))
print(as_retriever(r).config()["state"])
