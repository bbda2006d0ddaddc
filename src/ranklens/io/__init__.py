"""Readers and writers: TREC qrels/run files, JSON and JSONL."""
