;;;; The first file of the "order" system (never compiled: only its name matters).
