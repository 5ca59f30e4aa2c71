package loop

// What orchestrate reads at most of the files it reads whole: past these,
// a file is an error naming it and the cap, never read into memory.
const (
	// MaxTaskFile bounds .orchestrator/task.md, as --task-file does.
	MaxTaskFile = 1 << 20
	// maxArtifact bounds what runs/ holds that is read back (feedback,
	// a session's baseline).
	maxArtifact = 64 << 20
)
