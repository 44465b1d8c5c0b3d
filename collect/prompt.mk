# collect/prompt.mk: kbv prompt (the text a model needs to write a candidate).
