"""What the methods retrieve with: the structural evidence layer, hybrid fusion, page vectors
and reranking, references, the lexicon, routing in a library, vector indexes."""
