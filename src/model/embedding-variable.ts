/**
 * The environment variable naming the embedding model. Its own module, free of schemas, so a
 * command's help can name it without loading zod (`wiki search` starts without it).
 */
export const EMBEDDING_MODEL_VARIABLE = "SKILLSMITH_EMBEDDING_MODEL";
