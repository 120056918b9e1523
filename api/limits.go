package api

// MaxPage is the largest page (`first`) of search, a job's runs and a dataset's versions.
const MaxPage = 100
