;;;; Command lines the way Go's flag package reads them, so that the Lisp
;;;; programs take exactly the arguments of their Go twins (and scripts can
;;;; swap one for the other): -name value, -name=value, --name, boolean
;;;; flags without a value, -h or -help for the usage, and the flags end at
;;;; the first non-flag argument or at "--".  Errors and the usage text are
;;;; worded as Go words them.

(in-package #:cmdline)

(defstruct (flag-spec (:constructor flag-spec (name kind default usage)))
  (name "" :type string)
  (kind :string :type (member :string :int :bool :duration))
  default                               ; the value when the flag is absent
  (usage "" :type string))              ; `word` in it names the value

(define-condition flag-error (error)
  ((message :initarg :message :reader flag-error-message))
  (:report (lambda (c stream) (write-string (flag-error-message c) stream)))
  (:documentation "A bad command line: print the message, then the usage, exit 2."))

(define-condition help-requested (error) ()
  (:documentation "-h or -help: print the usage, exit 0."))

(defun flag-fail (format-control &rest args)
  (error 'flag-error :message (apply #'format nil format-control args)))

(defun parse-duration (text)
  "Seconds (a rational) in a Go duration such as 5s, 500ms, 1m30s or 0;
NIL if TEXT is not one."
  (let ((pos 0) (n (length text)) (total 0) (sign 1))
    (when (and (< pos n) (find (char text pos) "+-"))
      (when (char= (char text pos) #\-) (setf sign -1))
      (incf pos))
    (cond ((string= (subseq text pos) "0") (return-from parse-duration 0))
          ((= pos n) (return-from parse-duration nil)))
    (loop while (< pos n)
          do (let* ((number-end (or (position-if-not (lambda (c) (or (digit-char-p c) (char= c #\.)))
                                                     text :start pos)
                                    n))
                    (unit-end (or (position-if (lambda (c) (or (digit-char-p c) (char= c #\.)))
                                               text :start number-end)
                                  n))
                    (number (parse-decimal text pos number-end))
                    (unit (assoc (subseq text number-end unit-end)
                                 '(("h" . 3600) ("m" . 60) ("s" . 1) ("ms" . 1/1000)
                                   ("us" . 1/1000000) ("ns" . 1/1000000000))
                                 :test #'string=)))
               (unless (and number unit) (return-from parse-duration nil))
               (incf total (* number (cdr unit)))
               (setf pos unit-end)))
    (* sign total)))

(defun parse-decimal (text start end)
  "The exact rational of the digits [.digits] in TEXT[START, END), or NIL."
  (let* ((dot (position #\. text :start start :end end))
         (int-part (subseq text start (or dot end)))
         (frac-part (if dot (subseq text (1+ dot) end) "")))
    (when (and (or (plusp (length int-part)) (plusp (length frac-part)))
               (every #'digit-char-p int-part) (every #'digit-char-p frac-part)
               (or (null dot) (null (position #\. text :start (1+ dot) :end end))))
      (+ (if (plusp (length int-part)) (parse-integer int-part) 0)
         (if (plusp (length frac-part))
             (/ (parse-integer frac-part) (expt 10 (length frac-part)))
             0)))))

(defun format-duration (seconds)
  "SECONDS as Go prints a time.Duration in the usage: 10s, 1.5s, 500ms, 1m0s."
  (cond ((zerop seconds) "0s")
        ((< seconds 1) (format nil "~Dms" (round (* seconds 1000))))
        ((< seconds 60) (format nil "~As" (decimal-string seconds)))
        (t (multiple-value-bind (minutes rest) (floor seconds 60)
             (if (< minutes 60)
                 (format nil "~Dm~As" minutes (decimal-string rest))
                 (multiple-value-bind (hours minutes) (floor minutes 60)
                   (format nil "~Dh~Dm~As" hours minutes (decimal-string rest))))))))

(defun decimal-string (x)
  (if (integerp x)
      (format nil "~D" x)
      (string-right-trim "0" (format nil "~,9F" x))))

(defun parse-flag-value (spec text)
  (let ((name (flag-spec-name spec)))
    (flet ((bad (why) (flag-fail "invalid value ~S for flag -~A: ~A" text name why)))
      (ecase (flag-spec-kind spec)
        (:string text)
        (:int (handler-case (parse-integer text)
                (error () (bad "parse error"))))
        (:duration (or (parse-duration text) (bad "parse error")))
        (:bool (cond ((member text '("1" "t" "T" "true" "TRUE" "True") :test #'string=) t)
                     ((member text '("0" "f" "F" "false" "FALSE" "False") :test #'string=) nil)
                     (t (bad "parse error"))))))))

(defun parse-flags (specs args)
  "Parse ARGS (without the program name) against SPECS.  Returns (values
plist of values by keyword, remaining arguments, names of the flags given).
Signals FLAG-ERROR or HELP-REQUESTED."
  (let ((found (loop for spec in specs
                      collect (intern (string-upcase (substitute #\- #\_ (flag-spec-name spec))) :keyword)
                      collect (flag-spec-default spec)))
        (given '()))
    (loop
      (let ((arg (first args)))
        (when (or (null arg) (< (length arg) 2) (char/= (char arg 0) #\-))
          (return))
        (pop args)
        (when (string= arg "--")
          (return))
        (let* ((body (subseq arg (if (char= (char arg 1) #\-) 2 1)))
               (eq (position #\= body))
               (name (if eq (subseq body 0 eq) body))
               (spec (find name specs :key #'flag-spec-name :test #'string=)))
          (when (or (zerop (length name)) (char= (char name 0) #\-) (char= (char name 0) #\=))
            (flag-fail "bad flag syntax: ~A" arg))
          (unless spec
            (if (member name '("h" "help") :test #'string=)
                (error 'help-requested)
                (flag-fail "flag provided but not defined: -~A" name)))
          (let ((value (cond (eq (parse-flag-value spec (subseq body (1+ eq))))
                             ((eq (flag-spec-kind spec) :bool) t)
                             (args (parse-flag-value spec (pop args)))
                             (t (flag-fail "flag needs an argument: -~A" name)))))
            (setf (getf found (intern (string-upcase (substitute #\- #\_ name)) :keyword)) value)
            (pushnew name given :test #'string=)))))
    (values found args given)))

(defun print-flag-defaults (specs stream)
  "The flag list of Go's FlagSet.PrintDefaults, flags sorted by name."
  (dolist (spec (sort (copy-list specs) #'string< :key #'flag-spec-name))
    (let* ((usage (flag-spec-usage spec))
           (open (position #\` usage))
           (close (and open (position #\` usage :start (1+ open))))
           (value-name (cond (close (subseq usage (1+ open) close))
                             (t (ecase (flag-spec-kind spec)
                                  (:string "string") (:int "int") (:duration "duration") (:bool "")))))
           (text (if close (remove #\` usage) usage))
           (default (flag-spec-default spec)))
      (format stream "  -~A" (flag-spec-name spec))
      (when (plusp (length value-name))
        (format stream " ~A" value-name))
      ;; Go puts a one-letter flag's usage on the same line; ours are longer.
      (format stream "~%    	~A" text)
      (unless (or (null default) (equal default "") (eql default 0))
        (ecase (flag-spec-kind spec)
          (:string (format stream " (default ~S)" default))
          (:int (format stream " (default ~D)" default))
          (:duration (format stream " (default ~A)" (format-duration default)))
          (:bool (format stream " (default true)"))))
      (terpri stream))))

(defun program-name ()
  (let ((path (or (first sb-ext:*posix-argv*) "program")))
    (subseq path (1+ (or (position #\/ path :from-end t) -1)))))

(defun call-with-command-line (specs args fn &key (synopsis "[flags]") description)
  "Parse ARGS against SPECS and call FN with the values plist, the remaining
arguments and the names given; FN may signal FLAG-ERROR for checks of its
own.  Returns FN's value, or the exit code of a usage error (2, after the
message and the usage on stderr) or of -h (0, after the usage)."
  (flet ((usage ()
           (format *error-output* "usage: ~A ~A~%~%~A~%~%Flags:~%"
                   (program-name) synopsis description)
           (print-flag-defaults specs *error-output*)
           (finish-output *error-output*)))
    (handler-case
        (multiple-value-bind (options rest given) (parse-flags specs args)
          (funcall fn options rest given))
      (help-requested ()
        (usage)
        0)
      (flag-error (e)
        (format *error-output* "~A~%" e)
        (usage)
        2))))

(defun split-host-port (addr)
  "HOST and PORT of \"HOST:PORT\", or a FLAG-ERROR."
  (let* ((colon (position #\: addr :from-end t))
         (port (and colon (ignore-errors (parse-integer addr :start (1+ colon))))))
    (unless (and port (<= 0 port 65535))
      (flag-fail "-addr ~S is not HOST:PORT" addr))
    (values (string-trim "[]" (subseq addr 0 colon)) port)))
