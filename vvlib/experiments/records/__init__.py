"""What a chapter's record is (record), how its parameters are declared (declare), the checks and scales
several chapters share (checks, scales).  The records themselves live with their chapters: vvlib/book/chapters/."""
