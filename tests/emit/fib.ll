; emit-llvm small.ms fib int
; ModuleID = 'm0.'
source_filename = "m0."
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

define internal fastcc { i1, i64 } @m0.fib.0(ptr %0, i32 %1, i64 %2) unnamed_addr {
entry:
  %scratch33.i303 = alloca [4 x [2 x i64]], align 16
  %scratch33.i281 = alloca [4 x [2 x i64]], align 16
  %scratch33.i259 = alloca [4 x [2 x i64]], align 16
  %scratch33.i237 = alloca [4 x [2 x i64]], align 16
  %scratch33.i215 = alloca [4 x [2 x i64]], align 16
  %scratch33.i193 = alloca [4 x [2 x i64]], align 16
  %scratch33.i171 = alloca [4 x [2 x i64]], align 16
  %scratch33.i150 = alloca [4 x [2 x i64]], align 16
  %scratch33.i128 = alloca [4 x [2 x i64]], align 16
  %scratch33.i106 = alloca [4 x [2 x i64]], align 16
  %scratch33.i84 = alloca [4 x [2 x i64]], align 16
  %scratch33.i63 = alloca [4 x [2 x i64]], align 16
  %scratch33.i41 = alloca [4 x [2 x i64]], align 16
  %scratch33.i = alloca [4 x [2 x i64]], align 16
  %scratch34 = alloca [4 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %3 = getelementptr i8, ptr %vm, i64 268
  %max35 = load i32, ptr %3, align 4
  %4 = sext i32 %1 to i64
  %5 = add nsw i64 %4, 4
  %6 = sext i32 %max35 to i64
  %7 = icmp slt i64 %5, %6
  br i1 %7, label %fast, label %near_limit, !prof !1, !mist.same !0

common.ret:                                       ; preds = %near_limit, %join33, %badtype31, %fail27, %fail21, %fail6, %stop
  %common.ret.op = phi { i1, i64 } [ zeroinitializer, %stop ], [ zeroinitializer, %fail6 ], [ zeroinitializer, %fail21 ], [ zeroinitializer, %fail27 ], [ zeroinitializer, %badtype31 ], [ %378, %join33 ], [ %379, %near_limit ]
  ret { i1, i64 } %common.ret.op

fast:                                             ; preds = %entry
  %8 = add i64 %2, -1
  %9 = add i32 %1, 1
  %10 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %10, align 4
  %sp = tail call ptr @llvm.stacksave.p0()
  %11 = ptrtoint ptr %sp to i64
  %12 = icmp ule i64 %limit, %11
  %13 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %13, align 4
  %14 = getelementptr i8, ptr %vm, i64 288
  %deadline = load i64, ptr %14, align 4
  %15 = zext i32 %interrupt to i64
  %16 = or i64 %deadline, %15
  %17 = icmp eq i64 %16, 0
  %.not37 = and i1 %12, %17
  br i1 %.not37, label %go, label %slow3, !prof !1

slow3:                                            ; preds = %fast
  %18 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %18, align 4
  %19 = tail call i1 @mist_rt_call_check(ptr nonnull %0)
  br i1 %19, label %go, label %stop

go:                                               ; preds = %slow3, %fast
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i41)
  %20 = icmp slt i64 %8, 2
  br i1 %20, label %then.i61, label %join.i43

then.i61:                                         ; preds = %go
  %21 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %8, 1
  br label %m0.fib.twin.1.exit62

join.i43:                                         ; preds = %go
  %22 = add i64 %2, -2
  %23 = add i32 %1, 2
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i84)
  %24 = icmp ult i64 %22, 2
  br i1 %24, label %then.i104, label %join.i86

then.i104:                                        ; preds = %join.i43
  %25 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %22, 1
  br label %m0.fib.twin.3.exit105

join.i86:                                         ; preds = %join.i43
  %26 = add i64 %2, -3
  %27 = add i32 %1, 3
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i259)
  %28 = icmp ult i64 %26, 2
  br i1 %28, label %then.i279, label %join.i261

then.i279:                                        ; preds = %join.i86
  %29 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %26, 1
  br label %m0.fib.twin.4.exit280

join.i261:                                        ; preds = %join.i86
  %30 = add i64 %2, -4
  %31 = add i32 %1, 4
  %32 = icmp ult i64 %30, 2
  br i1 %32, label %base.i344, label %call.i342

base.i344:                                        ; preds = %join.i261
  %33 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %30, 1
  br label %m0.fib.0.peek.exit345

call.i342:                                        ; preds = %join.i261
  %34 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %31, i64 %30)
  br label %m0.fib.0.peek.exit345

m0.fib.0.peek.exit345:                            ; preds = %base.i344, %call.i342
  %common.ret.op.i343 = phi { i1, i64 } [ %33, %base.i344 ], [ %34, %call.i342 ]
  %ok3.i262 = extractvalue { i1, i64 } %common.ret.op.i343, 0
  br i1 %ok3.i262, label %ok4.i265, label %fail5.i263, !prof !1

ok4.i265:                                         ; preds = %m0.fib.0.peek.exit345
  %35 = extractvalue { i1, i64 } %common.ret.op.i343, 1
  %36 = add i64 %2, -5
  %37 = icmp ult i64 %36, 2
  br i1 %37, label %base.i340, label %call.i338

base.i340:                                        ; preds = %ok4.i265
  %38 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %36, 1
  br label %m0.fib.0.peek.exit341

call.i338:                                        ; preds = %ok4.i265
  %39 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %31, i64 %36)
  br label %m0.fib.0.peek.exit341

m0.fib.0.peek.exit341:                            ; preds = %base.i340, %call.i338
  %common.ret.op.i339 = phi { i1, i64 } [ %38, %base.i340 ], [ %39, %call.i338 ]
  %ok18.i266 = extractvalue { i1, i64 } %common.ret.op.i339, 0
  br i1 %ok18.i266, label %ok19.i268, label %fail20.i267, !prof !1

fail5.i263:                                       ; preds = %m0.fib.0.peek.exit345
  tail call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit280

ok19.i268:                                        ; preds = %m0.fib.0.peek.exit341
  %40 = extractvalue { i1, i64 } %common.ret.op.i339, 1
  %41 = tail call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %35, i64 %40)
  %42 = extractvalue { i64, i1 } %41, 1
  br i1 %42, label %slow22.i271, label %fast21.i269, !prof !2

fail20.i267:                                      ; preds = %m0.fib.0.peek.exit341
  tail call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit280

fast21.i269:                                      ; preds = %ok19.i268
  %43 = extractvalue { i64, i1 } %41, 0
  br label %join32.i270

slow22.i271:                                      ; preds = %ok19.i268
  %vals24.i272 = getelementptr inbounds i8, ptr %scratch33.i259, i64 32
  store i64 3, ptr %scratch33.i259, align 16
  %44 = getelementptr inbounds i8, ptr %scratch33.i259, i64 8
  store i64 %35, ptr %44, align 8
  %45 = getelementptr inbounds i8, ptr %scratch33.i259, i64 16
  store i64 3, ptr %45, align 16
  %46 = getelementptr inbounds i8, ptr %scratch33.i259, i64 24
  store i64 %40, ptr %46, align 8
  %47 = getelementptr i8, ptr %vm, i64 264
  store i32 %27, ptr %47, align 4
  %48 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i259, ptr nonnull %vals24.i272)
  br i1 %48, label %ok25.i274, label %fail26.i273, !prof !1

ok25.i274:                                        ; preds = %slow22.i271
  %tag27.i275 = load i64, ptr %vals24.i272, align 16
  %49 = getelementptr inbounds i8, ptr %scratch33.i259, i64 40
  %pay28.i276 = load i64, ptr %49, align 8
  %50 = icmp eq i64 %tag27.i275, 3
  br i1 %50, label %join32.i270, label %badtype30.i277, !prof !1

fail26.i273:                                      ; preds = %slow22.i271
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit280

badtype30.i277:                                   ; preds = %ok25.i274
  %vals31.i278 = getelementptr inbounds i8, ptr %scratch33.i259, i64 48
  store i64 %tag27.i275, ptr %vals31.i278, align 16
  %51 = getelementptr inbounds i8, ptr %scratch33.i259, i64 56
  store i64 %pay28.i276, ptr %51, align 8
  %52 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i278, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit280

join32.i270:                                      ; preds = %ok25.i274, %fast21.i269
  %53 = phi i64 [ %43, %fast21.i269 ], [ %pay28.i276, %ok25.i274 ]
  %54 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %53, 1
  br label %m0.fib.twin.4.exit280

m0.fib.twin.4.exit280:                            ; preds = %then.i279, %fail5.i263, %fail20.i267, %fail26.i273, %badtype30.i277, %join32.i270
  %common.ret.op.i264 = phi { i1, i64 } [ %29, %then.i279 ], [ zeroinitializer, %fail5.i263 ], [ zeroinitializer, %fail20.i267 ], [ zeroinitializer, %fail26.i273 ], [ zeroinitializer, %badtype30.i277 ], [ %54, %join32.i270 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i259)
  %ok3.i87 = extractvalue { i1, i64 } %common.ret.op.i264, 0
  br i1 %ok3.i87, label %ok4.i90, label %fail5.i88, !prof !1

ok4.i90:                                          ; preds = %m0.fib.twin.4.exit280
  %55 = extractvalue { i1, i64 } %common.ret.op.i264, 1
  %56 = add i64 %2, -4
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i237)
  %57 = icmp ult i64 %56, 2
  br i1 %57, label %then.i257, label %join.i239

then.i257:                                        ; preds = %ok4.i90
  %58 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %56, 1
  br label %m0.fib.twin.4.exit258

join.i239:                                        ; preds = %ok4.i90
  %59 = add i64 %2, -5
  %60 = add i32 %1, 4
  %61 = icmp ult i64 %59, 2
  br i1 %61, label %base.i352, label %call.i350

base.i352:                                        ; preds = %join.i239
  %62 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %59, 1
  br label %m0.fib.0.peek.exit353

call.i350:                                        ; preds = %join.i239
  %63 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %60, i64 %59)
  br label %m0.fib.0.peek.exit353

m0.fib.0.peek.exit353:                            ; preds = %base.i352, %call.i350
  %common.ret.op.i351 = phi { i1, i64 } [ %62, %base.i352 ], [ %63, %call.i350 ]
  %ok3.i240 = extractvalue { i1, i64 } %common.ret.op.i351, 0
  br i1 %ok3.i240, label %ok4.i243, label %fail5.i241, !prof !1

ok4.i243:                                         ; preds = %m0.fib.0.peek.exit353
  %64 = extractvalue { i1, i64 } %common.ret.op.i351, 1
  %65 = add i64 %2, -6
  %66 = icmp ult i64 %65, 2
  br i1 %66, label %base.i348, label %call.i346

base.i348:                                        ; preds = %ok4.i243
  %67 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %65, 1
  br label %m0.fib.0.peek.exit349

call.i346:                                        ; preds = %ok4.i243
  %68 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %60, i64 %65)
  br label %m0.fib.0.peek.exit349

m0.fib.0.peek.exit349:                            ; preds = %base.i348, %call.i346
  %common.ret.op.i347 = phi { i1, i64 } [ %67, %base.i348 ], [ %68, %call.i346 ]
  %ok18.i244 = extractvalue { i1, i64 } %common.ret.op.i347, 0
  br i1 %ok18.i244, label %ok19.i246, label %fail20.i245, !prof !1

fail5.i241:                                       ; preds = %m0.fib.0.peek.exit353
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit258

ok19.i246:                                        ; preds = %m0.fib.0.peek.exit349
  %69 = extractvalue { i1, i64 } %common.ret.op.i347, 1
  %70 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %64, i64 %69)
  %71 = extractvalue { i64, i1 } %70, 1
  br i1 %71, label %slow22.i249, label %fast21.i247, !prof !2

fail20.i245:                                      ; preds = %m0.fib.0.peek.exit349
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit258

fast21.i247:                                      ; preds = %ok19.i246
  %72 = extractvalue { i64, i1 } %70, 0
  br label %join32.i248

slow22.i249:                                      ; preds = %ok19.i246
  %vals24.i250 = getelementptr inbounds i8, ptr %scratch33.i237, i64 32
  store i64 3, ptr %scratch33.i237, align 16
  %73 = getelementptr inbounds i8, ptr %scratch33.i237, i64 8
  store i64 %64, ptr %73, align 8
  %74 = getelementptr inbounds i8, ptr %scratch33.i237, i64 16
  store i64 3, ptr %74, align 16
  %75 = getelementptr inbounds i8, ptr %scratch33.i237, i64 24
  store i64 %69, ptr %75, align 8
  %76 = getelementptr i8, ptr %vm, i64 264
  store i32 %27, ptr %76, align 4
  %77 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i237, ptr nonnull %vals24.i250)
  br i1 %77, label %ok25.i252, label %fail26.i251, !prof !1

ok25.i252:                                        ; preds = %slow22.i249
  %tag27.i253 = load i64, ptr %vals24.i250, align 16
  %78 = getelementptr inbounds i8, ptr %scratch33.i237, i64 40
  %pay28.i254 = load i64, ptr %78, align 8
  %79 = icmp eq i64 %tag27.i253, 3
  br i1 %79, label %join32.i248, label %badtype30.i255, !prof !1

fail26.i251:                                      ; preds = %slow22.i249
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit258

badtype30.i255:                                   ; preds = %ok25.i252
  %vals31.i256 = getelementptr inbounds i8, ptr %scratch33.i237, i64 48
  store i64 %tag27.i253, ptr %vals31.i256, align 16
  %80 = getelementptr inbounds i8, ptr %scratch33.i237, i64 56
  store i64 %pay28.i254, ptr %80, align 8
  %81 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i256, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit258

join32.i248:                                      ; preds = %ok25.i252, %fast21.i247
  %82 = phi i64 [ %72, %fast21.i247 ], [ %pay28.i254, %ok25.i252 ]
  %83 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %82, 1
  br label %m0.fib.twin.4.exit258

m0.fib.twin.4.exit258:                            ; preds = %then.i257, %fail5.i241, %fail20.i245, %fail26.i251, %badtype30.i255, %join32.i248
  %common.ret.op.i242 = phi { i1, i64 } [ %58, %then.i257 ], [ zeroinitializer, %fail5.i241 ], [ zeroinitializer, %fail20.i245 ], [ zeroinitializer, %fail26.i251 ], [ zeroinitializer, %badtype30.i255 ], [ %83, %join32.i248 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i237)
  %ok18.i91 = extractvalue { i1, i64 } %common.ret.op.i242, 0
  br i1 %ok18.i91, label %ok19.i93, label %fail20.i92, !prof !1

fail5.i88:                                        ; preds = %m0.fib.twin.4.exit280
  call void @mist_rt_fail(ptr nonnull %0, i32 38)
  br label %m0.fib.twin.3.exit105

ok19.i93:                                         ; preds = %m0.fib.twin.4.exit258
  %84 = extractvalue { i1, i64 } %common.ret.op.i242, 1
  %85 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %55, i64 %84)
  %86 = extractvalue { i64, i1 } %85, 1
  br i1 %86, label %slow22.i96, label %fast21.i94, !prof !2

fail20.i92:                                       ; preds = %m0.fib.twin.4.exit258
  call void @mist_rt_fail(ptr nonnull %0, i32 42)
  br label %m0.fib.twin.3.exit105

fast21.i94:                                       ; preds = %ok19.i93
  %87 = extractvalue { i64, i1 } %85, 0
  br label %join32.i95

slow22.i96:                                       ; preds = %ok19.i93
  %vals24.i97 = getelementptr inbounds i8, ptr %scratch33.i84, i64 32
  store i64 3, ptr %scratch33.i84, align 16
  %88 = getelementptr inbounds i8, ptr %scratch33.i84, i64 8
  store i64 %55, ptr %88, align 8
  %89 = getelementptr inbounds i8, ptr %scratch33.i84, i64 16
  store i64 3, ptr %89, align 16
  %90 = getelementptr inbounds i8, ptr %scratch33.i84, i64 24
  store i64 %84, ptr %90, align 8
  %91 = getelementptr i8, ptr %vm, i64 264
  store i32 %23, ptr %91, align 4
  %92 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i84, ptr nonnull %vals24.i97)
  br i1 %92, label %ok25.i99, label %fail26.i98, !prof !1

ok25.i99:                                         ; preds = %slow22.i96
  %tag27.i100 = load i64, ptr %vals24.i97, align 16
  %93 = getelementptr inbounds i8, ptr %scratch33.i84, i64 40
  %pay28.i101 = load i64, ptr %93, align 8
  %94 = icmp eq i64 %tag27.i100, 3
  br i1 %94, label %join32.i95, label %badtype30.i102, !prof !1

fail26.i98:                                       ; preds = %slow22.i96
  call void @mist_rt_fail(ptr nonnull %0, i32 43)
  br label %m0.fib.twin.3.exit105

badtype30.i102:                                   ; preds = %ok25.i99
  %vals31.i103 = getelementptr inbounds i8, ptr %scratch33.i84, i64 48
  store i64 %tag27.i100, ptr %vals31.i103, align 16
  %95 = getelementptr inbounds i8, ptr %scratch33.i84, i64 56
  store i64 %pay28.i101, ptr %95, align 8
  %96 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i103, i32 44)
  call void @mist_rt_fail(ptr nonnull %0, i32 45)
  br label %m0.fib.twin.3.exit105

join32.i95:                                       ; preds = %ok25.i99, %fast21.i94
  %97 = phi i64 [ %87, %fast21.i94 ], [ %pay28.i101, %ok25.i99 ]
  %98 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %97, 1
  br label %m0.fib.twin.3.exit105

m0.fib.twin.3.exit105:                            ; preds = %then.i104, %fail5.i88, %fail20.i92, %fail26.i98, %badtype30.i102, %join32.i95
  %common.ret.op.i89 = phi { i1, i64 } [ %25, %then.i104 ], [ zeroinitializer, %fail5.i88 ], [ zeroinitializer, %fail20.i92 ], [ zeroinitializer, %fail26.i98 ], [ zeroinitializer, %badtype30.i102 ], [ %98, %join32.i95 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i84)
  %ok3.i44 = extractvalue { i1, i64 } %common.ret.op.i89, 0
  br i1 %ok3.i44, label %ok4.i47, label %fail5.i45, !prof !1

ok4.i47:                                          ; preds = %m0.fib.twin.3.exit105
  %99 = extractvalue { i1, i64 } %common.ret.op.i89, 1
  %100 = add i64 %2, -3
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i63)
  %101 = icmp ult i64 %100, 2
  br i1 %101, label %then.i83, label %join.i65

then.i83:                                         ; preds = %ok4.i47
  %102 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %100, 1
  br label %m0.fib.twin.3.exit

join.i65:                                         ; preds = %ok4.i47
  %103 = add i64 %2, -4
  %104 = add i32 %1, 3
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i303)
  %105 = icmp ult i64 %103, 2
  br i1 %105, label %then.i323, label %join.i305

then.i323:                                        ; preds = %join.i65
  %106 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %103, 1
  br label %m0.fib.twin.4.exit324

join.i305:                                        ; preds = %join.i65
  %107 = add i64 %2, -5
  %108 = add i32 %1, 4
  %109 = icmp ult i64 %107, 2
  br i1 %109, label %base.i328, label %call.i326

base.i328:                                        ; preds = %join.i305
  %110 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %107, 1
  br label %m0.fib.0.peek.exit329

call.i326:                                        ; preds = %join.i305
  %111 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %108, i64 %107)
  br label %m0.fib.0.peek.exit329

m0.fib.0.peek.exit329:                            ; preds = %base.i328, %call.i326
  %common.ret.op.i327 = phi { i1, i64 } [ %110, %base.i328 ], [ %111, %call.i326 ]
  %ok3.i306 = extractvalue { i1, i64 } %common.ret.op.i327, 0
  br i1 %ok3.i306, label %ok4.i309, label %fail5.i307, !prof !1

ok4.i309:                                         ; preds = %m0.fib.0.peek.exit329
  %112 = extractvalue { i1, i64 } %common.ret.op.i327, 1
  %113 = add i64 %2, -6
  %114 = icmp ult i64 %113, 2
  br i1 %114, label %base.i, label %call.i

base.i:                                           ; preds = %ok4.i309
  %115 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %113, 1
  br label %m0.fib.0.peek.exit

call.i:                                           ; preds = %ok4.i309
  %116 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %108, i64 %113)
  br label %m0.fib.0.peek.exit

m0.fib.0.peek.exit:                               ; preds = %base.i, %call.i
  %common.ret.op.i325 = phi { i1, i64 } [ %115, %base.i ], [ %116, %call.i ]
  %ok18.i310 = extractvalue { i1, i64 } %common.ret.op.i325, 0
  br i1 %ok18.i310, label %ok19.i312, label %fail20.i311, !prof !1

fail5.i307:                                       ; preds = %m0.fib.0.peek.exit329
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit324

ok19.i312:                                        ; preds = %m0.fib.0.peek.exit
  %117 = extractvalue { i1, i64 } %common.ret.op.i325, 1
  %118 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %112, i64 %117)
  %119 = extractvalue { i64, i1 } %118, 1
  br i1 %119, label %slow22.i315, label %fast21.i313, !prof !2

fail20.i311:                                      ; preds = %m0.fib.0.peek.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit324

fast21.i313:                                      ; preds = %ok19.i312
  %120 = extractvalue { i64, i1 } %118, 0
  br label %join32.i314

slow22.i315:                                      ; preds = %ok19.i312
  %vals24.i316 = getelementptr inbounds i8, ptr %scratch33.i303, i64 32
  store i64 3, ptr %scratch33.i303, align 16
  %121 = getelementptr inbounds i8, ptr %scratch33.i303, i64 8
  store i64 %112, ptr %121, align 8
  %122 = getelementptr inbounds i8, ptr %scratch33.i303, i64 16
  store i64 3, ptr %122, align 16
  %123 = getelementptr inbounds i8, ptr %scratch33.i303, i64 24
  store i64 %117, ptr %123, align 8
  %124 = getelementptr i8, ptr %vm, i64 264
  store i32 %104, ptr %124, align 4
  %125 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i303, ptr nonnull %vals24.i316)
  br i1 %125, label %ok25.i318, label %fail26.i317, !prof !1

ok25.i318:                                        ; preds = %slow22.i315
  %tag27.i319 = load i64, ptr %vals24.i316, align 16
  %126 = getelementptr inbounds i8, ptr %scratch33.i303, i64 40
  %pay28.i320 = load i64, ptr %126, align 8
  %127 = icmp eq i64 %tag27.i319, 3
  br i1 %127, label %join32.i314, label %badtype30.i321, !prof !1

fail26.i317:                                      ; preds = %slow22.i315
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit324

badtype30.i321:                                   ; preds = %ok25.i318
  %vals31.i322 = getelementptr inbounds i8, ptr %scratch33.i303, i64 48
  store i64 %tag27.i319, ptr %vals31.i322, align 16
  %128 = getelementptr inbounds i8, ptr %scratch33.i303, i64 56
  store i64 %pay28.i320, ptr %128, align 8
  %129 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i322, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit324

join32.i314:                                      ; preds = %ok25.i318, %fast21.i313
  %130 = phi i64 [ %120, %fast21.i313 ], [ %pay28.i320, %ok25.i318 ]
  %131 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %130, 1
  br label %m0.fib.twin.4.exit324

m0.fib.twin.4.exit324:                            ; preds = %then.i323, %fail5.i307, %fail20.i311, %fail26.i317, %badtype30.i321, %join32.i314
  %common.ret.op.i308 = phi { i1, i64 } [ %106, %then.i323 ], [ zeroinitializer, %fail5.i307 ], [ zeroinitializer, %fail20.i311 ], [ zeroinitializer, %fail26.i317 ], [ zeroinitializer, %badtype30.i321 ], [ %131, %join32.i314 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i303)
  %ok3.i66 = extractvalue { i1, i64 } %common.ret.op.i308, 0
  br i1 %ok3.i66, label %ok4.i69, label %fail5.i67, !prof !1

ok4.i69:                                          ; preds = %m0.fib.twin.4.exit324
  %132 = extractvalue { i1, i64 } %common.ret.op.i308, 1
  %133 = add i64 %2, -5
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i281)
  %134 = icmp ult i64 %133, 2
  br i1 %134, label %then.i301, label %join.i283

then.i301:                                        ; preds = %ok4.i69
  %135 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %133, 1
  br label %m0.fib.twin.4.exit302

join.i283:                                        ; preds = %ok4.i69
  %136 = add i64 %2, -6
  %137 = add i32 %1, 4
  %138 = icmp ult i64 %136, 2
  br i1 %138, label %base.i336, label %call.i334

base.i336:                                        ; preds = %join.i283
  %139 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %136, 1
  br label %m0.fib.0.peek.exit337

call.i334:                                        ; preds = %join.i283
  %140 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %137, i64 %136)
  br label %m0.fib.0.peek.exit337

m0.fib.0.peek.exit337:                            ; preds = %base.i336, %call.i334
  %common.ret.op.i335 = phi { i1, i64 } [ %139, %base.i336 ], [ %140, %call.i334 ]
  %ok3.i284 = extractvalue { i1, i64 } %common.ret.op.i335, 0
  br i1 %ok3.i284, label %ok4.i287, label %fail5.i285, !prof !1

ok4.i287:                                         ; preds = %m0.fib.0.peek.exit337
  %141 = extractvalue { i1, i64 } %common.ret.op.i335, 1
  %142 = add i64 %2, -7
  %143 = icmp ult i64 %142, 2
  br i1 %143, label %base.i332, label %call.i330

base.i332:                                        ; preds = %ok4.i287
  %144 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %142, 1
  br label %m0.fib.0.peek.exit333

call.i330:                                        ; preds = %ok4.i287
  %145 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %137, i64 %142)
  br label %m0.fib.0.peek.exit333

m0.fib.0.peek.exit333:                            ; preds = %base.i332, %call.i330
  %common.ret.op.i331 = phi { i1, i64 } [ %144, %base.i332 ], [ %145, %call.i330 ]
  %ok18.i288 = extractvalue { i1, i64 } %common.ret.op.i331, 0
  br i1 %ok18.i288, label %ok19.i290, label %fail20.i289, !prof !1

fail5.i285:                                       ; preds = %m0.fib.0.peek.exit337
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit302

ok19.i290:                                        ; preds = %m0.fib.0.peek.exit333
  %146 = extractvalue { i1, i64 } %common.ret.op.i331, 1
  %147 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %141, i64 %146)
  %148 = extractvalue { i64, i1 } %147, 1
  br i1 %148, label %slow22.i293, label %fast21.i291, !prof !2

fail20.i289:                                      ; preds = %m0.fib.0.peek.exit333
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit302

fast21.i291:                                      ; preds = %ok19.i290
  %149 = extractvalue { i64, i1 } %147, 0
  br label %join32.i292

slow22.i293:                                      ; preds = %ok19.i290
  %vals24.i294 = getelementptr inbounds i8, ptr %scratch33.i281, i64 32
  store i64 3, ptr %scratch33.i281, align 16
  %150 = getelementptr inbounds i8, ptr %scratch33.i281, i64 8
  store i64 %141, ptr %150, align 8
  %151 = getelementptr inbounds i8, ptr %scratch33.i281, i64 16
  store i64 3, ptr %151, align 16
  %152 = getelementptr inbounds i8, ptr %scratch33.i281, i64 24
  store i64 %146, ptr %152, align 8
  %153 = getelementptr i8, ptr %vm, i64 264
  store i32 %104, ptr %153, align 4
  %154 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i281, ptr nonnull %vals24.i294)
  br i1 %154, label %ok25.i296, label %fail26.i295, !prof !1

ok25.i296:                                        ; preds = %slow22.i293
  %tag27.i297 = load i64, ptr %vals24.i294, align 16
  %155 = getelementptr inbounds i8, ptr %scratch33.i281, i64 40
  %pay28.i298 = load i64, ptr %155, align 8
  %156 = icmp eq i64 %tag27.i297, 3
  br i1 %156, label %join32.i292, label %badtype30.i299, !prof !1

fail26.i295:                                      ; preds = %slow22.i293
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit302

badtype30.i299:                                   ; preds = %ok25.i296
  %vals31.i300 = getelementptr inbounds i8, ptr %scratch33.i281, i64 48
  store i64 %tag27.i297, ptr %vals31.i300, align 16
  %157 = getelementptr inbounds i8, ptr %scratch33.i281, i64 56
  store i64 %pay28.i298, ptr %157, align 8
  %158 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i300, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit302

join32.i292:                                      ; preds = %ok25.i296, %fast21.i291
  %159 = phi i64 [ %149, %fast21.i291 ], [ %pay28.i298, %ok25.i296 ]
  %160 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %159, 1
  br label %m0.fib.twin.4.exit302

m0.fib.twin.4.exit302:                            ; preds = %then.i301, %fail5.i285, %fail20.i289, %fail26.i295, %badtype30.i299, %join32.i292
  %common.ret.op.i286 = phi { i1, i64 } [ %135, %then.i301 ], [ zeroinitializer, %fail5.i285 ], [ zeroinitializer, %fail20.i289 ], [ zeroinitializer, %fail26.i295 ], [ zeroinitializer, %badtype30.i299 ], [ %160, %join32.i292 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i281)
  %ok18.i70 = extractvalue { i1, i64 } %common.ret.op.i286, 0
  br i1 %ok18.i70, label %ok19.i72, label %fail20.i71, !prof !1

fail5.i67:                                        ; preds = %m0.fib.twin.4.exit324
  call void @mist_rt_fail(ptr nonnull %0, i32 38)
  br label %m0.fib.twin.3.exit

ok19.i72:                                         ; preds = %m0.fib.twin.4.exit302
  %161 = extractvalue { i1, i64 } %common.ret.op.i286, 1
  %162 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %132, i64 %161)
  %163 = extractvalue { i64, i1 } %162, 1
  br i1 %163, label %slow22.i75, label %fast21.i73, !prof !2

fail20.i71:                                       ; preds = %m0.fib.twin.4.exit302
  call void @mist_rt_fail(ptr nonnull %0, i32 42)
  br label %m0.fib.twin.3.exit

fast21.i73:                                       ; preds = %ok19.i72
  %164 = extractvalue { i64, i1 } %162, 0
  br label %join32.i74

slow22.i75:                                       ; preds = %ok19.i72
  %vals24.i76 = getelementptr inbounds i8, ptr %scratch33.i63, i64 32
  store i64 3, ptr %scratch33.i63, align 16
  %165 = getelementptr inbounds i8, ptr %scratch33.i63, i64 8
  store i64 %132, ptr %165, align 8
  %166 = getelementptr inbounds i8, ptr %scratch33.i63, i64 16
  store i64 3, ptr %166, align 16
  %167 = getelementptr inbounds i8, ptr %scratch33.i63, i64 24
  store i64 %161, ptr %167, align 8
  %168 = getelementptr i8, ptr %vm, i64 264
  store i32 %23, ptr %168, align 4
  %169 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i63, ptr nonnull %vals24.i76)
  br i1 %169, label %ok25.i78, label %fail26.i77, !prof !1

ok25.i78:                                         ; preds = %slow22.i75
  %tag27.i79 = load i64, ptr %vals24.i76, align 16
  %170 = getelementptr inbounds i8, ptr %scratch33.i63, i64 40
  %pay28.i80 = load i64, ptr %170, align 8
  %171 = icmp eq i64 %tag27.i79, 3
  br i1 %171, label %join32.i74, label %badtype30.i81, !prof !1

fail26.i77:                                       ; preds = %slow22.i75
  call void @mist_rt_fail(ptr nonnull %0, i32 43)
  br label %m0.fib.twin.3.exit

badtype30.i81:                                    ; preds = %ok25.i78
  %vals31.i82 = getelementptr inbounds i8, ptr %scratch33.i63, i64 48
  store i64 %tag27.i79, ptr %vals31.i82, align 16
  %172 = getelementptr inbounds i8, ptr %scratch33.i63, i64 56
  store i64 %pay28.i80, ptr %172, align 8
  %173 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i82, i32 44)
  call void @mist_rt_fail(ptr nonnull %0, i32 45)
  br label %m0.fib.twin.3.exit

join32.i74:                                       ; preds = %ok25.i78, %fast21.i73
  %174 = phi i64 [ %164, %fast21.i73 ], [ %pay28.i80, %ok25.i78 ]
  %175 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %174, 1
  br label %m0.fib.twin.3.exit

m0.fib.twin.3.exit:                               ; preds = %then.i83, %fail5.i67, %fail20.i71, %fail26.i77, %badtype30.i81, %join32.i74
  %common.ret.op.i68 = phi { i1, i64 } [ %102, %then.i83 ], [ zeroinitializer, %fail5.i67 ], [ zeroinitializer, %fail20.i71 ], [ zeroinitializer, %fail26.i77 ], [ zeroinitializer, %badtype30.i81 ], [ %175, %join32.i74 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i63)
  %ok18.i48 = extractvalue { i1, i64 } %common.ret.op.i68, 0
  br i1 %ok18.i48, label %ok19.i50, label %fail20.i49, !prof !1

fail5.i45:                                        ; preds = %m0.fib.twin.3.exit105
  call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit62

ok19.i50:                                         ; preds = %m0.fib.twin.3.exit
  %176 = extractvalue { i1, i64 } %common.ret.op.i68, 1
  %177 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %99, i64 %176)
  %178 = extractvalue { i64, i1 } %177, 1
  br i1 %178, label %slow22.i53, label %fast21.i51, !prof !2

fail20.i49:                                       ; preds = %m0.fib.twin.3.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 19)
  br label %m0.fib.twin.1.exit62

fast21.i51:                                       ; preds = %ok19.i50
  %179 = extractvalue { i64, i1 } %177, 0
  br label %join32.i52

slow22.i53:                                       ; preds = %ok19.i50
  %vals24.i54 = getelementptr inbounds i8, ptr %scratch33.i41, i64 32
  store i64 3, ptr %scratch33.i41, align 16
  %180 = getelementptr inbounds i8, ptr %scratch33.i41, i64 8
  store i64 %99, ptr %180, align 8
  %181 = getelementptr inbounds i8, ptr %scratch33.i41, i64 16
  store i64 3, ptr %181, align 16
  %182 = getelementptr inbounds i8, ptr %scratch33.i41, i64 24
  store i64 %176, ptr %182, align 8
  %183 = getelementptr i8, ptr %vm, i64 264
  store i32 %9, ptr %183, align 4
  %184 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i41, ptr nonnull %vals24.i54)
  br i1 %184, label %ok25.i56, label %fail26.i55, !prof !1

ok25.i56:                                         ; preds = %slow22.i53
  %tag27.i57 = load i64, ptr %vals24.i54, align 16
  %185 = getelementptr inbounds i8, ptr %scratch33.i41, i64 40
  %pay28.i58 = load i64, ptr %185, align 8
  %186 = icmp eq i64 %tag27.i57, 3
  br i1 %186, label %join32.i52, label %badtype30.i59, !prof !1

fail26.i55:                                       ; preds = %slow22.i53
  call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit62

badtype30.i59:                                    ; preds = %ok25.i56
  %vals31.i60 = getelementptr inbounds i8, ptr %scratch33.i41, i64 48
  store i64 %tag27.i57, ptr %vals31.i60, align 16
  %187 = getelementptr inbounds i8, ptr %scratch33.i41, i64 56
  store i64 %pay28.i58, ptr %187, align 8
  %188 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i60, i32 21)
  call void @mist_rt_fail(ptr nonnull %0, i32 22)
  br label %m0.fib.twin.1.exit62

join32.i52:                                       ; preds = %ok25.i56, %fast21.i51
  %189 = phi i64 [ %179, %fast21.i51 ], [ %pay28.i58, %ok25.i56 ]
  %190 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %189, 1
  br label %m0.fib.twin.1.exit62

m0.fib.twin.1.exit62:                             ; preds = %then.i61, %fail5.i45, %fail20.i49, %fail26.i55, %badtype30.i59, %join32.i52
  %common.ret.op.i46 = phi { i1, i64 } [ %21, %then.i61 ], [ zeroinitializer, %fail5.i45 ], [ zeroinitializer, %fail20.i49 ], [ zeroinitializer, %fail26.i55 ], [ zeroinitializer, %badtype30.i59 ], [ %190, %join32.i52 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i41)
  %ok4 = extractvalue { i1, i64 } %common.ret.op.i46, 0
  br i1 %ok4, label %ok5, label %fail6, !prof !1

stop:                                             ; preds = %slow3
  tail call void @mist_rt_fail(ptr nonnull %0, i32 3)
  br label %common.ret

ok5:                                              ; preds = %m0.fib.twin.1.exit62
  %191 = extractvalue { i1, i64 } %common.ret.op.i46, 1
  %192 = add i64 %2, -2
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i)
  %193 = icmp slt i64 %192, 2
  br i1 %193, label %then.i, label %join.i

then.i:                                           ; preds = %ok5
  %194 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %192, 1
  br label %m0.fib.twin.1.exit

join.i:                                           ; preds = %ok5
  %195 = add i64 %2, -3
  %196 = add i32 %1, 2
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i128)
  %197 = icmp ult i64 %195, 2
  br i1 %197, label %then.i148, label %join.i130

then.i148:                                        ; preds = %join.i
  %198 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %195, 1
  br label %m0.fib.twin.3.exit149

join.i130:                                        ; preds = %join.i
  %199 = add i64 %2, -4
  %200 = add i32 %1, 3
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i171)
  %201 = icmp ult i64 %199, 2
  br i1 %201, label %then.i191, label %join.i173

then.i191:                                        ; preds = %join.i130
  %202 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %199, 1
  br label %m0.fib.twin.4.exit192

join.i173:                                        ; preds = %join.i130
  %203 = add i64 %2, -5
  %204 = add i32 %1, 4
  %205 = icmp ult i64 %203, 2
  br i1 %205, label %base.i376, label %call.i374

base.i376:                                        ; preds = %join.i173
  %206 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %203, 1
  br label %m0.fib.0.peek.exit377

call.i374:                                        ; preds = %join.i173
  %207 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %204, i64 %203)
  br label %m0.fib.0.peek.exit377

m0.fib.0.peek.exit377:                            ; preds = %base.i376, %call.i374
  %common.ret.op.i375 = phi { i1, i64 } [ %206, %base.i376 ], [ %207, %call.i374 ]
  %ok3.i174 = extractvalue { i1, i64 } %common.ret.op.i375, 0
  br i1 %ok3.i174, label %ok4.i177, label %fail5.i175, !prof !1

ok4.i177:                                         ; preds = %m0.fib.0.peek.exit377
  %208 = extractvalue { i1, i64 } %common.ret.op.i375, 1
  %209 = add i64 %2, -6
  %210 = icmp ult i64 %209, 2
  br i1 %210, label %base.i372, label %call.i370

base.i372:                                        ; preds = %ok4.i177
  %211 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %209, 1
  br label %m0.fib.0.peek.exit373

call.i370:                                        ; preds = %ok4.i177
  %212 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %204, i64 %209)
  br label %m0.fib.0.peek.exit373

m0.fib.0.peek.exit373:                            ; preds = %base.i372, %call.i370
  %common.ret.op.i371 = phi { i1, i64 } [ %211, %base.i372 ], [ %212, %call.i370 ]
  %ok18.i178 = extractvalue { i1, i64 } %common.ret.op.i371, 0
  br i1 %ok18.i178, label %ok19.i180, label %fail20.i179, !prof !1

fail5.i175:                                       ; preds = %m0.fib.0.peek.exit377
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit192

ok19.i180:                                        ; preds = %m0.fib.0.peek.exit373
  %213 = extractvalue { i1, i64 } %common.ret.op.i371, 1
  %214 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %208, i64 %213)
  %215 = extractvalue { i64, i1 } %214, 1
  br i1 %215, label %slow22.i183, label %fast21.i181, !prof !2

fail20.i179:                                      ; preds = %m0.fib.0.peek.exit373
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit192

fast21.i181:                                      ; preds = %ok19.i180
  %216 = extractvalue { i64, i1 } %214, 0
  br label %join32.i182

slow22.i183:                                      ; preds = %ok19.i180
  %vals24.i184 = getelementptr inbounds i8, ptr %scratch33.i171, i64 32
  store i64 3, ptr %scratch33.i171, align 16
  %217 = getelementptr inbounds i8, ptr %scratch33.i171, i64 8
  store i64 %208, ptr %217, align 8
  %218 = getelementptr inbounds i8, ptr %scratch33.i171, i64 16
  store i64 3, ptr %218, align 16
  %219 = getelementptr inbounds i8, ptr %scratch33.i171, i64 24
  store i64 %213, ptr %219, align 8
  %220 = getelementptr i8, ptr %vm, i64 264
  store i32 %200, ptr %220, align 4
  %221 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i171, ptr nonnull %vals24.i184)
  br i1 %221, label %ok25.i186, label %fail26.i185, !prof !1

ok25.i186:                                        ; preds = %slow22.i183
  %tag27.i187 = load i64, ptr %vals24.i184, align 16
  %222 = getelementptr inbounds i8, ptr %scratch33.i171, i64 40
  %pay28.i188 = load i64, ptr %222, align 8
  %223 = icmp eq i64 %tag27.i187, 3
  br i1 %223, label %join32.i182, label %badtype30.i189, !prof !1

fail26.i185:                                      ; preds = %slow22.i183
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit192

badtype30.i189:                                   ; preds = %ok25.i186
  %vals31.i190 = getelementptr inbounds i8, ptr %scratch33.i171, i64 48
  store i64 %tag27.i187, ptr %vals31.i190, align 16
  %224 = getelementptr inbounds i8, ptr %scratch33.i171, i64 56
  store i64 %pay28.i188, ptr %224, align 8
  %225 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i190, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit192

join32.i182:                                      ; preds = %ok25.i186, %fast21.i181
  %226 = phi i64 [ %216, %fast21.i181 ], [ %pay28.i188, %ok25.i186 ]
  %227 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %226, 1
  br label %m0.fib.twin.4.exit192

m0.fib.twin.4.exit192:                            ; preds = %then.i191, %fail5.i175, %fail20.i179, %fail26.i185, %badtype30.i189, %join32.i182
  %common.ret.op.i176 = phi { i1, i64 } [ %202, %then.i191 ], [ zeroinitializer, %fail5.i175 ], [ zeroinitializer, %fail20.i179 ], [ zeroinitializer, %fail26.i185 ], [ zeroinitializer, %badtype30.i189 ], [ %227, %join32.i182 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i171)
  %ok3.i131 = extractvalue { i1, i64 } %common.ret.op.i176, 0
  br i1 %ok3.i131, label %ok4.i134, label %fail5.i132, !prof !1

ok4.i134:                                         ; preds = %m0.fib.twin.4.exit192
  %228 = extractvalue { i1, i64 } %common.ret.op.i176, 1
  %229 = add i64 %2, -5
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i150)
  %230 = icmp ult i64 %229, 2
  br i1 %230, label %then.i170, label %join.i152

then.i170:                                        ; preds = %ok4.i134
  %231 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %229, 1
  br label %m0.fib.twin.4.exit

join.i152:                                        ; preds = %ok4.i134
  %232 = add i64 %2, -6
  %233 = add i32 %1, 4
  %234 = icmp ult i64 %232, 2
  br i1 %234, label %base.i384, label %call.i382

base.i384:                                        ; preds = %join.i152
  %235 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %232, 1
  br label %m0.fib.0.peek.exit385

call.i382:                                        ; preds = %join.i152
  %236 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %233, i64 %232)
  br label %m0.fib.0.peek.exit385

m0.fib.0.peek.exit385:                            ; preds = %base.i384, %call.i382
  %common.ret.op.i383 = phi { i1, i64 } [ %235, %base.i384 ], [ %236, %call.i382 ]
  %ok3.i153 = extractvalue { i1, i64 } %common.ret.op.i383, 0
  br i1 %ok3.i153, label %ok4.i156, label %fail5.i154, !prof !1

ok4.i156:                                         ; preds = %m0.fib.0.peek.exit385
  %237 = extractvalue { i1, i64 } %common.ret.op.i383, 1
  %238 = add i64 %2, -7
  %239 = icmp ult i64 %238, 2
  br i1 %239, label %base.i380, label %call.i378

base.i380:                                        ; preds = %ok4.i156
  %240 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %238, 1
  br label %m0.fib.0.peek.exit381

call.i378:                                        ; preds = %ok4.i156
  %241 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %233, i64 %238)
  br label %m0.fib.0.peek.exit381

m0.fib.0.peek.exit381:                            ; preds = %base.i380, %call.i378
  %common.ret.op.i379 = phi { i1, i64 } [ %240, %base.i380 ], [ %241, %call.i378 ]
  %ok18.i157 = extractvalue { i1, i64 } %common.ret.op.i379, 0
  br i1 %ok18.i157, label %ok19.i159, label %fail20.i158, !prof !1

fail5.i154:                                       ; preds = %m0.fib.0.peek.exit385
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit

ok19.i159:                                        ; preds = %m0.fib.0.peek.exit381
  %242 = extractvalue { i1, i64 } %common.ret.op.i379, 1
  %243 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %237, i64 %242)
  %244 = extractvalue { i64, i1 } %243, 1
  br i1 %244, label %slow22.i162, label %fast21.i160, !prof !2

fail20.i158:                                      ; preds = %m0.fib.0.peek.exit381
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit

fast21.i160:                                      ; preds = %ok19.i159
  %245 = extractvalue { i64, i1 } %243, 0
  br label %join32.i161

slow22.i162:                                      ; preds = %ok19.i159
  %vals24.i163 = getelementptr inbounds i8, ptr %scratch33.i150, i64 32
  store i64 3, ptr %scratch33.i150, align 16
  %246 = getelementptr inbounds i8, ptr %scratch33.i150, i64 8
  store i64 %237, ptr %246, align 8
  %247 = getelementptr inbounds i8, ptr %scratch33.i150, i64 16
  store i64 3, ptr %247, align 16
  %248 = getelementptr inbounds i8, ptr %scratch33.i150, i64 24
  store i64 %242, ptr %248, align 8
  %249 = getelementptr i8, ptr %vm, i64 264
  store i32 %200, ptr %249, align 4
  %250 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i150, ptr nonnull %vals24.i163)
  br i1 %250, label %ok25.i165, label %fail26.i164, !prof !1

ok25.i165:                                        ; preds = %slow22.i162
  %tag27.i166 = load i64, ptr %vals24.i163, align 16
  %251 = getelementptr inbounds i8, ptr %scratch33.i150, i64 40
  %pay28.i167 = load i64, ptr %251, align 8
  %252 = icmp eq i64 %tag27.i166, 3
  br i1 %252, label %join32.i161, label %badtype30.i168, !prof !1

fail26.i164:                                      ; preds = %slow22.i162
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit

badtype30.i168:                                   ; preds = %ok25.i165
  %vals31.i169 = getelementptr inbounds i8, ptr %scratch33.i150, i64 48
  store i64 %tag27.i166, ptr %vals31.i169, align 16
  %253 = getelementptr inbounds i8, ptr %scratch33.i150, i64 56
  store i64 %pay28.i167, ptr %253, align 8
  %254 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i169, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit

join32.i161:                                      ; preds = %ok25.i165, %fast21.i160
  %255 = phi i64 [ %245, %fast21.i160 ], [ %pay28.i167, %ok25.i165 ]
  %256 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %255, 1
  br label %m0.fib.twin.4.exit

m0.fib.twin.4.exit:                               ; preds = %then.i170, %fail5.i154, %fail20.i158, %fail26.i164, %badtype30.i168, %join32.i161
  %common.ret.op.i155 = phi { i1, i64 } [ %231, %then.i170 ], [ zeroinitializer, %fail5.i154 ], [ zeroinitializer, %fail20.i158 ], [ zeroinitializer, %fail26.i164 ], [ zeroinitializer, %badtype30.i168 ], [ %256, %join32.i161 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i150)
  %ok18.i135 = extractvalue { i1, i64 } %common.ret.op.i155, 0
  br i1 %ok18.i135, label %ok19.i137, label %fail20.i136, !prof !1

fail5.i132:                                       ; preds = %m0.fib.twin.4.exit192
  call void @mist_rt_fail(ptr nonnull %0, i32 38)
  br label %m0.fib.twin.3.exit149

ok19.i137:                                        ; preds = %m0.fib.twin.4.exit
  %257 = extractvalue { i1, i64 } %common.ret.op.i155, 1
  %258 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %228, i64 %257)
  %259 = extractvalue { i64, i1 } %258, 1
  br i1 %259, label %slow22.i140, label %fast21.i138, !prof !2

fail20.i136:                                      ; preds = %m0.fib.twin.4.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 42)
  br label %m0.fib.twin.3.exit149

fast21.i138:                                      ; preds = %ok19.i137
  %260 = extractvalue { i64, i1 } %258, 0
  br label %join32.i139

slow22.i140:                                      ; preds = %ok19.i137
  %vals24.i141 = getelementptr inbounds i8, ptr %scratch33.i128, i64 32
  store i64 3, ptr %scratch33.i128, align 16
  %261 = getelementptr inbounds i8, ptr %scratch33.i128, i64 8
  store i64 %228, ptr %261, align 8
  %262 = getelementptr inbounds i8, ptr %scratch33.i128, i64 16
  store i64 3, ptr %262, align 16
  %263 = getelementptr inbounds i8, ptr %scratch33.i128, i64 24
  store i64 %257, ptr %263, align 8
  %264 = getelementptr i8, ptr %vm, i64 264
  store i32 %196, ptr %264, align 4
  %265 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i128, ptr nonnull %vals24.i141)
  br i1 %265, label %ok25.i143, label %fail26.i142, !prof !1

ok25.i143:                                        ; preds = %slow22.i140
  %tag27.i144 = load i64, ptr %vals24.i141, align 16
  %266 = getelementptr inbounds i8, ptr %scratch33.i128, i64 40
  %pay28.i145 = load i64, ptr %266, align 8
  %267 = icmp eq i64 %tag27.i144, 3
  br i1 %267, label %join32.i139, label %badtype30.i146, !prof !1

fail26.i142:                                      ; preds = %slow22.i140
  call void @mist_rt_fail(ptr nonnull %0, i32 43)
  br label %m0.fib.twin.3.exit149

badtype30.i146:                                   ; preds = %ok25.i143
  %vals31.i147 = getelementptr inbounds i8, ptr %scratch33.i128, i64 48
  store i64 %tag27.i144, ptr %vals31.i147, align 16
  %268 = getelementptr inbounds i8, ptr %scratch33.i128, i64 56
  store i64 %pay28.i145, ptr %268, align 8
  %269 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i147, i32 44)
  call void @mist_rt_fail(ptr nonnull %0, i32 45)
  br label %m0.fib.twin.3.exit149

join32.i139:                                      ; preds = %ok25.i143, %fast21.i138
  %270 = phi i64 [ %260, %fast21.i138 ], [ %pay28.i145, %ok25.i143 ]
  %271 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %270, 1
  br label %m0.fib.twin.3.exit149

m0.fib.twin.3.exit149:                            ; preds = %then.i148, %fail5.i132, %fail20.i136, %fail26.i142, %badtype30.i146, %join32.i139
  %common.ret.op.i133 = phi { i1, i64 } [ %198, %then.i148 ], [ zeroinitializer, %fail5.i132 ], [ zeroinitializer, %fail20.i136 ], [ zeroinitializer, %fail26.i142 ], [ zeroinitializer, %badtype30.i146 ], [ %271, %join32.i139 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i128)
  %ok3.i = extractvalue { i1, i64 } %common.ret.op.i133, 0
  br i1 %ok3.i, label %ok4.i, label %fail5.i, !prof !1

ok4.i:                                            ; preds = %m0.fib.twin.3.exit149
  %272 = extractvalue { i1, i64 } %common.ret.op.i133, 1
  %273 = add i64 %2, -4
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i106)
  %274 = icmp ult i64 %273, 2
  br i1 %274, label %then.i126, label %join.i108

then.i126:                                        ; preds = %ok4.i
  %275 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %273, 1
  br label %m0.fib.twin.3.exit127

join.i108:                                        ; preds = %ok4.i
  %276 = add i64 %2, -5
  %277 = add i32 %1, 3
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i215)
  %278 = icmp ult i64 %276, 2
  br i1 %278, label %then.i235, label %join.i217

then.i235:                                        ; preds = %join.i108
  %279 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %276, 1
  br label %m0.fib.twin.4.exit236

join.i217:                                        ; preds = %join.i108
  %280 = add i64 %2, -6
  %281 = add i32 %1, 4
  %282 = icmp ult i64 %280, 2
  br i1 %282, label %base.i360, label %call.i358

base.i360:                                        ; preds = %join.i217
  %283 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %280, 1
  br label %m0.fib.0.peek.exit361

call.i358:                                        ; preds = %join.i217
  %284 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %281, i64 %280)
  br label %m0.fib.0.peek.exit361

m0.fib.0.peek.exit361:                            ; preds = %base.i360, %call.i358
  %common.ret.op.i359 = phi { i1, i64 } [ %283, %base.i360 ], [ %284, %call.i358 ]
  %ok3.i218 = extractvalue { i1, i64 } %common.ret.op.i359, 0
  br i1 %ok3.i218, label %ok4.i221, label %fail5.i219, !prof !1

ok4.i221:                                         ; preds = %m0.fib.0.peek.exit361
  %285 = extractvalue { i1, i64 } %common.ret.op.i359, 1
  %286 = add i64 %2, -7
  %287 = icmp ult i64 %286, 2
  br i1 %287, label %base.i356, label %call.i354

base.i356:                                        ; preds = %ok4.i221
  %288 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %286, 1
  br label %m0.fib.0.peek.exit357

call.i354:                                        ; preds = %ok4.i221
  %289 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %281, i64 %286)
  br label %m0.fib.0.peek.exit357

m0.fib.0.peek.exit357:                            ; preds = %base.i356, %call.i354
  %common.ret.op.i355 = phi { i1, i64 } [ %288, %base.i356 ], [ %289, %call.i354 ]
  %ok18.i222 = extractvalue { i1, i64 } %common.ret.op.i355, 0
  br i1 %ok18.i222, label %ok19.i224, label %fail20.i223, !prof !1

fail5.i219:                                       ; preds = %m0.fib.0.peek.exit361
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit236

ok19.i224:                                        ; preds = %m0.fib.0.peek.exit357
  %290 = extractvalue { i1, i64 } %common.ret.op.i355, 1
  %291 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %285, i64 %290)
  %292 = extractvalue { i64, i1 } %291, 1
  br i1 %292, label %slow22.i227, label %fast21.i225, !prof !2

fail20.i223:                                      ; preds = %m0.fib.0.peek.exit357
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit236

fast21.i225:                                      ; preds = %ok19.i224
  %293 = extractvalue { i64, i1 } %291, 0
  br label %join32.i226

slow22.i227:                                      ; preds = %ok19.i224
  %vals24.i228 = getelementptr inbounds i8, ptr %scratch33.i215, i64 32
  store i64 3, ptr %scratch33.i215, align 16
  %294 = getelementptr inbounds i8, ptr %scratch33.i215, i64 8
  store i64 %285, ptr %294, align 8
  %295 = getelementptr inbounds i8, ptr %scratch33.i215, i64 16
  store i64 3, ptr %295, align 16
  %296 = getelementptr inbounds i8, ptr %scratch33.i215, i64 24
  store i64 %290, ptr %296, align 8
  %297 = getelementptr i8, ptr %vm, i64 264
  store i32 %277, ptr %297, align 4
  %298 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i215, ptr nonnull %vals24.i228)
  br i1 %298, label %ok25.i230, label %fail26.i229, !prof !1

ok25.i230:                                        ; preds = %slow22.i227
  %tag27.i231 = load i64, ptr %vals24.i228, align 16
  %299 = getelementptr inbounds i8, ptr %scratch33.i215, i64 40
  %pay28.i232 = load i64, ptr %299, align 8
  %300 = icmp eq i64 %tag27.i231, 3
  br i1 %300, label %join32.i226, label %badtype30.i233, !prof !1

fail26.i229:                                      ; preds = %slow22.i227
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit236

badtype30.i233:                                   ; preds = %ok25.i230
  %vals31.i234 = getelementptr inbounds i8, ptr %scratch33.i215, i64 48
  store i64 %tag27.i231, ptr %vals31.i234, align 16
  %301 = getelementptr inbounds i8, ptr %scratch33.i215, i64 56
  store i64 %pay28.i232, ptr %301, align 8
  %302 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i234, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit236

join32.i226:                                      ; preds = %ok25.i230, %fast21.i225
  %303 = phi i64 [ %293, %fast21.i225 ], [ %pay28.i232, %ok25.i230 ]
  %304 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %303, 1
  br label %m0.fib.twin.4.exit236

m0.fib.twin.4.exit236:                            ; preds = %then.i235, %fail5.i219, %fail20.i223, %fail26.i229, %badtype30.i233, %join32.i226
  %common.ret.op.i220 = phi { i1, i64 } [ %279, %then.i235 ], [ zeroinitializer, %fail5.i219 ], [ zeroinitializer, %fail20.i223 ], [ zeroinitializer, %fail26.i229 ], [ zeroinitializer, %badtype30.i233 ], [ %304, %join32.i226 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i215)
  %ok3.i109 = extractvalue { i1, i64 } %common.ret.op.i220, 0
  br i1 %ok3.i109, label %ok4.i112, label %fail5.i110, !prof !1

ok4.i112:                                         ; preds = %m0.fib.twin.4.exit236
  %305 = extractvalue { i1, i64 } %common.ret.op.i220, 1
  %306 = add i64 %2, -6
  call void @llvm.lifetime.start.p0(i64 64, ptr nonnull %scratch33.i193)
  %307 = icmp ult i64 %306, 2
  br i1 %307, label %then.i213, label %join.i195

then.i213:                                        ; preds = %ok4.i112
  %308 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %306, 1
  br label %m0.fib.twin.4.exit214

join.i195:                                        ; preds = %ok4.i112
  %309 = add i64 %2, -7
  %310 = add i32 %1, 4
  %311 = icmp ult i64 %309, 2
  br i1 %311, label %base.i368, label %call.i366

base.i368:                                        ; preds = %join.i195
  %312 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %309, 1
  br label %m0.fib.0.peek.exit369

call.i366:                                        ; preds = %join.i195
  %313 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %310, i64 %309)
  br label %m0.fib.0.peek.exit369

m0.fib.0.peek.exit369:                            ; preds = %base.i368, %call.i366
  %common.ret.op.i367 = phi { i1, i64 } [ %312, %base.i368 ], [ %313, %call.i366 ]
  %ok3.i196 = extractvalue { i1, i64 } %common.ret.op.i367, 0
  br i1 %ok3.i196, label %ok4.i199, label %fail5.i197, !prof !1

ok4.i199:                                         ; preds = %m0.fib.0.peek.exit369
  %314 = extractvalue { i1, i64 } %common.ret.op.i367, 1
  %315 = add i64 %2, -8
  %316 = icmp ult i64 %315, 2
  br i1 %316, label %base.i364, label %call.i362

base.i364:                                        ; preds = %ok4.i199
  %317 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %315, 1
  br label %m0.fib.0.peek.exit365

call.i362:                                        ; preds = %ok4.i199
  %318 = call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %310, i64 %315)
  br label %m0.fib.0.peek.exit365

m0.fib.0.peek.exit365:                            ; preds = %base.i364, %call.i362
  %common.ret.op.i363 = phi { i1, i64 } [ %317, %base.i364 ], [ %318, %call.i362 ]
  %ok18.i200 = extractvalue { i1, i64 } %common.ret.op.i363, 0
  br i1 %ok18.i200, label %ok19.i202, label %fail20.i201, !prof !1

fail5.i197:                                       ; preds = %m0.fib.0.peek.exit369
  call void @mist_rt_fail(ptr nonnull %0, i32 49)
  br label %m0.fib.twin.4.exit214

ok19.i202:                                        ; preds = %m0.fib.0.peek.exit365
  %319 = extractvalue { i1, i64 } %common.ret.op.i363, 1
  %320 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %314, i64 %319)
  %321 = extractvalue { i64, i1 } %320, 1
  br i1 %321, label %slow22.i205, label %fast21.i203, !prof !2

fail20.i201:                                      ; preds = %m0.fib.0.peek.exit365
  call void @mist_rt_fail(ptr nonnull %0, i32 53)
  br label %m0.fib.twin.4.exit214

fast21.i203:                                      ; preds = %ok19.i202
  %322 = extractvalue { i64, i1 } %320, 0
  br label %join32.i204

slow22.i205:                                      ; preds = %ok19.i202
  %vals24.i206 = getelementptr inbounds i8, ptr %scratch33.i193, i64 32
  store i64 3, ptr %scratch33.i193, align 16
  %323 = getelementptr inbounds i8, ptr %scratch33.i193, i64 8
  store i64 %314, ptr %323, align 8
  %324 = getelementptr inbounds i8, ptr %scratch33.i193, i64 16
  store i64 3, ptr %324, align 16
  %325 = getelementptr inbounds i8, ptr %scratch33.i193, i64 24
  store i64 %319, ptr %325, align 8
  %326 = getelementptr i8, ptr %vm, i64 264
  store i32 %277, ptr %326, align 4
  %327 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i193, ptr nonnull %vals24.i206)
  br i1 %327, label %ok25.i208, label %fail26.i207, !prof !1

ok25.i208:                                        ; preds = %slow22.i205
  %tag27.i209 = load i64, ptr %vals24.i206, align 16
  %328 = getelementptr inbounds i8, ptr %scratch33.i193, i64 40
  %pay28.i210 = load i64, ptr %328, align 8
  %329 = icmp eq i64 %tag27.i209, 3
  br i1 %329, label %join32.i204, label %badtype30.i211, !prof !1

fail26.i207:                                      ; preds = %slow22.i205
  call void @mist_rt_fail(ptr nonnull %0, i32 54)
  br label %m0.fib.twin.4.exit214

badtype30.i211:                                   ; preds = %ok25.i208
  %vals31.i212 = getelementptr inbounds i8, ptr %scratch33.i193, i64 48
  store i64 %tag27.i209, ptr %vals31.i212, align 16
  %330 = getelementptr inbounds i8, ptr %scratch33.i193, i64 56
  store i64 %pay28.i210, ptr %330, align 8
  %331 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i212, i32 55)
  call void @mist_rt_fail(ptr nonnull %0, i32 56)
  br label %m0.fib.twin.4.exit214

join32.i204:                                      ; preds = %ok25.i208, %fast21.i203
  %332 = phi i64 [ %322, %fast21.i203 ], [ %pay28.i210, %ok25.i208 ]
  %333 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %332, 1
  br label %m0.fib.twin.4.exit214

m0.fib.twin.4.exit214:                            ; preds = %then.i213, %fail5.i197, %fail20.i201, %fail26.i207, %badtype30.i211, %join32.i204
  %common.ret.op.i198 = phi { i1, i64 } [ %308, %then.i213 ], [ zeroinitializer, %fail5.i197 ], [ zeroinitializer, %fail20.i201 ], [ zeroinitializer, %fail26.i207 ], [ zeroinitializer, %badtype30.i211 ], [ %333, %join32.i204 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i193)
  %ok18.i113 = extractvalue { i1, i64 } %common.ret.op.i198, 0
  br i1 %ok18.i113, label %ok19.i115, label %fail20.i114, !prof !1

fail5.i110:                                       ; preds = %m0.fib.twin.4.exit236
  call void @mist_rt_fail(ptr nonnull %0, i32 38)
  br label %m0.fib.twin.3.exit127

ok19.i115:                                        ; preds = %m0.fib.twin.4.exit214
  %334 = extractvalue { i1, i64 } %common.ret.op.i198, 1
  %335 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %305, i64 %334)
  %336 = extractvalue { i64, i1 } %335, 1
  br i1 %336, label %slow22.i118, label %fast21.i116, !prof !2

fail20.i114:                                      ; preds = %m0.fib.twin.4.exit214
  call void @mist_rt_fail(ptr nonnull %0, i32 42)
  br label %m0.fib.twin.3.exit127

fast21.i116:                                      ; preds = %ok19.i115
  %337 = extractvalue { i64, i1 } %335, 0
  br label %join32.i117

slow22.i118:                                      ; preds = %ok19.i115
  %vals24.i119 = getelementptr inbounds i8, ptr %scratch33.i106, i64 32
  store i64 3, ptr %scratch33.i106, align 16
  %338 = getelementptr inbounds i8, ptr %scratch33.i106, i64 8
  store i64 %305, ptr %338, align 8
  %339 = getelementptr inbounds i8, ptr %scratch33.i106, i64 16
  store i64 3, ptr %339, align 16
  %340 = getelementptr inbounds i8, ptr %scratch33.i106, i64 24
  store i64 %334, ptr %340, align 8
  %341 = getelementptr i8, ptr %vm, i64 264
  store i32 %196, ptr %341, align 4
  %342 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i106, ptr nonnull %vals24.i119)
  br i1 %342, label %ok25.i121, label %fail26.i120, !prof !1

ok25.i121:                                        ; preds = %slow22.i118
  %tag27.i122 = load i64, ptr %vals24.i119, align 16
  %343 = getelementptr inbounds i8, ptr %scratch33.i106, i64 40
  %pay28.i123 = load i64, ptr %343, align 8
  %344 = icmp eq i64 %tag27.i122, 3
  br i1 %344, label %join32.i117, label %badtype30.i124, !prof !1

fail26.i120:                                      ; preds = %slow22.i118
  call void @mist_rt_fail(ptr nonnull %0, i32 43)
  br label %m0.fib.twin.3.exit127

badtype30.i124:                                   ; preds = %ok25.i121
  %vals31.i125 = getelementptr inbounds i8, ptr %scratch33.i106, i64 48
  store i64 %tag27.i122, ptr %vals31.i125, align 16
  %345 = getelementptr inbounds i8, ptr %scratch33.i106, i64 56
  store i64 %pay28.i123, ptr %345, align 8
  %346 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i125, i32 44)
  call void @mist_rt_fail(ptr nonnull %0, i32 45)
  br label %m0.fib.twin.3.exit127

join32.i117:                                      ; preds = %ok25.i121, %fast21.i116
  %347 = phi i64 [ %337, %fast21.i116 ], [ %pay28.i123, %ok25.i121 ]
  %348 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %347, 1
  br label %m0.fib.twin.3.exit127

m0.fib.twin.3.exit127:                            ; preds = %then.i126, %fail5.i110, %fail20.i114, %fail26.i120, %badtype30.i124, %join32.i117
  %common.ret.op.i111 = phi { i1, i64 } [ %275, %then.i126 ], [ zeroinitializer, %fail5.i110 ], [ zeroinitializer, %fail20.i114 ], [ zeroinitializer, %fail26.i120 ], [ zeroinitializer, %badtype30.i124 ], [ %348, %join32.i117 ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i106)
  %ok18.i = extractvalue { i1, i64 } %common.ret.op.i111, 0
  br i1 %ok18.i, label %ok19.i, label %fail20.i, !prof !1

fail5.i:                                          ; preds = %m0.fib.twin.3.exit149
  call void @mist_rt_fail(ptr nonnull %0, i32 15)
  br label %m0.fib.twin.1.exit

ok19.i:                                           ; preds = %m0.fib.twin.3.exit127
  %349 = extractvalue { i1, i64 } %common.ret.op.i111, 1
  %350 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %272, i64 %349)
  %351 = extractvalue { i64, i1 } %350, 1
  br i1 %351, label %slow22.i, label %fast21.i, !prof !2

fail20.i:                                         ; preds = %m0.fib.twin.3.exit127
  call void @mist_rt_fail(ptr nonnull %0, i32 19)
  br label %m0.fib.twin.1.exit

fast21.i:                                         ; preds = %ok19.i
  %352 = extractvalue { i64, i1 } %350, 0
  br label %join32.i

slow22.i:                                         ; preds = %ok19.i
  %vals24.i = getelementptr inbounds i8, ptr %scratch33.i, i64 32
  store i64 3, ptr %scratch33.i, align 16
  %353 = getelementptr inbounds i8, ptr %scratch33.i, i64 8
  store i64 %272, ptr %353, align 8
  %354 = getelementptr inbounds i8, ptr %scratch33.i, i64 16
  store i64 3, ptr %354, align 16
  %355 = getelementptr inbounds i8, ptr %scratch33.i, i64 24
  store i64 %349, ptr %355, align 8
  %356 = getelementptr i8, ptr %vm, i64 264
  store i32 %9, ptr %356, align 4
  %357 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch33.i, ptr nonnull %vals24.i)
  br i1 %357, label %ok25.i, label %fail26.i, !prof !1

ok25.i:                                           ; preds = %slow22.i
  %tag27.i = load i64, ptr %vals24.i, align 16
  %358 = getelementptr inbounds i8, ptr %scratch33.i, i64 40
  %pay28.i = load i64, ptr %358, align 8
  %359 = icmp eq i64 %tag27.i, 3
  br i1 %359, label %join32.i, label %badtype30.i, !prof !1

fail26.i:                                         ; preds = %slow22.i
  call void @mist_rt_fail(ptr nonnull %0, i32 20)
  br label %m0.fib.twin.1.exit

badtype30.i:                                      ; preds = %ok25.i
  %vals31.i = getelementptr inbounds i8, ptr %scratch33.i, i64 48
  store i64 %tag27.i, ptr %vals31.i, align 16
  %360 = getelementptr inbounds i8, ptr %scratch33.i, i64 56
  store i64 %pay28.i, ptr %360, align 8
  %361 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals31.i, i32 21)
  call void @mist_rt_fail(ptr nonnull %0, i32 22)
  br label %m0.fib.twin.1.exit

join32.i:                                         ; preds = %ok25.i, %fast21.i
  %362 = phi i64 [ %352, %fast21.i ], [ %pay28.i, %ok25.i ]
  %363 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %362, 1
  br label %m0.fib.twin.1.exit

m0.fib.twin.1.exit:                               ; preds = %then.i, %fail5.i, %fail20.i, %fail26.i, %badtype30.i, %join32.i
  %common.ret.op.i = phi { i1, i64 } [ %194, %then.i ], [ zeroinitializer, %fail5.i ], [ zeroinitializer, %fail20.i ], [ zeroinitializer, %fail26.i ], [ zeroinitializer, %badtype30.i ], [ %363, %join32.i ]
  call void @llvm.lifetime.end.p0(i64 64, ptr nonnull %scratch33.i)
  %ok19 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %ok19, label %ok20, label %fail21, !prof !1

fail6:                                            ; preds = %m0.fib.twin.1.exit62
  call void @mist_rt_fail(ptr nonnull %0, i32 4)
  br label %common.ret

ok20:                                             ; preds = %m0.fib.twin.1.exit
  %364 = extractvalue { i1, i64 } %common.ret.op.i, 1
  %365 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %191, i64 %364)
  %366 = extractvalue { i64, i1 } %365, 1
  br i1 %366, label %slow23, label %fast22, !prof !2

fail21:                                           ; preds = %m0.fib.twin.1.exit
  call void @mist_rt_fail(ptr nonnull %0, i32 8)
  br label %common.ret

fast22:                                           ; preds = %ok20
  %367 = extractvalue { i64, i1 } %365, 0
  br label %join33

slow23:                                           ; preds = %ok20
  %vals25 = getelementptr inbounds i8, ptr %scratch34, i64 32
  store i64 3, ptr %scratch34, align 16
  %368 = getelementptr inbounds i8, ptr %scratch34, i64 8
  store i64 %191, ptr %368, align 8
  %369 = getelementptr inbounds i8, ptr %scratch34, i64 16
  store i64 3, ptr %369, align 16
  %370 = getelementptr inbounds i8, ptr %scratch34, i64 24
  store i64 %364, ptr %370, align 8
  %371 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %371, align 4
  %372 = call i1 @mist_rt_prim(ptr nonnull %0, i32 0, i32 2, ptr nonnull %scratch34, ptr nonnull %vals25)
  br i1 %372, label %ok26, label %fail27, !prof !1

ok26:                                             ; preds = %slow23
  %tag28 = load i64, ptr %vals25, align 16
  %373 = getelementptr inbounds i8, ptr %scratch34, i64 40
  %pay29 = load i64, ptr %373, align 8
  %374 = icmp eq i64 %tag28, 3
  br i1 %374, label %join33, label %badtype31, !prof !1

fail27:                                           ; preds = %slow23
  call void @mist_rt_fail(ptr nonnull %0, i32 9)
  br label %common.ret

badtype31:                                        ; preds = %ok26
  %vals32 = getelementptr inbounds i8, ptr %scratch34, i64 48
  store i64 %tag28, ptr %vals32, align 16
  %375 = getelementptr inbounds i8, ptr %scratch34, i64 56
  store i64 %pay29, ptr %375, align 8
  %376 = call i1 @mist_rt_bad_value(ptr nonnull %0, ptr nonnull %vals32, i32 10)
  call void @mist_rt_fail(ptr nonnull %0, i32 11)
  br label %common.ret

join33:                                           ; preds = %ok26, %fast22
  %377 = phi i64 [ %367, %fast22 ], [ %pay29, %ok26 ]
  %378 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %377, 1
  br label %common.ret

near_limit:                                       ; preds = %entry
  %379 = tail call fastcc { i1, i64 } @m0.fib.careful.2(ptr nonnull %0, i32 %1, i64 %2)
  br label %common.ret
}

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.ssub.with.overflow.i64(i64, i64) #0

declare i1 @mist_rt_prim(ptr, i32, i32, ptr, ptr) local_unnamed_addr

declare void @mist_rt_fail(ptr, i32) local_unnamed_addr

declare i1 @mist_rt_bad_value(ptr, ptr, i32) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind willreturn
declare ptr @llvm.stacksave.p0() #1

declare i1 @mist_rt_call_check(ptr) local_unnamed_addr

; Function Attrs: mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare { i64, i1 } @llvm.sadd.with.overflow.i64(i64, i64) #0

; Function Attrs: noinline optnone
define internal fastcc { i1, i64 } @m0.fib.careful.2(ptr %0, i32 %1, i64 %2) unnamed_addr #2 {
entry:
  %scratch34 = alloca [4 x [2 x i64]], align 16
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  br label %start

start:                                            ; preds = %entry
  %3 = phi i64 [ %2, %entry ]
  %4 = icmp slt i64 %3, 2
  br i1 %4, label %then, label %else

then:                                             ; preds = %start
  %5 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %3, 1
  ret { i1, i64 } %5

else:                                             ; preds = %start
  br label %fib.join1

fib.join1:                                        ; preds = %else
  %6 = call { i64, i1 } @llvm.ssub.with.overflow.i64(i64 %3, i64 1)
  br label %fast

fast:                                             ; preds = %fib.join1
  %7 = extractvalue { i64, i1 } %6, 0
  br label %join

join:                                             ; preds = %fast
  %8 = add i32 %1, 1
  %9 = getelementptr i8, ptr %vm, i64 268
  %max = load i32, ptr %9, align 4
  %10 = getelementptr i8, ptr %vm, i64 272
  %limit = load i64, ptr %10, align 4
  %sp = call ptr @llvm.stacksave.p0()
  %11 = ptrtoint ptr %sp to i64
  %12 = icmp ult i64 %11, %limit
  %13 = getelementptr i8, ptr %vm, i64 280
  %interrupt = load volatile i32, ptr %13, align 4
  %14 = getelementptr i8, ptr %vm, i64 288
  %deadline = load i64, ptr %14, align 4
  %15 = zext i32 %interrupt to i64
  %16 = or i64 %15, %deadline
  %17 = icmp ne i64 %16, 0
  %18 = icmp sge i32 %1, %max
  %19 = or i1 %18, %12
  %20 = or i1 %19, %17
  %21 = xor i1 %20, true
  br i1 %21, label %go, label %slow3, !prof !1

slow3:                                            ; preds = %join
  %22 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %22, align 4
  %23 = call i1 @mist_rt_call_check(ptr %0)
  br i1 %23, label %go, label %stop

go:                                               ; preds = %slow3, %join
  %24 = call fastcc { i1, i64 } @m0.fib.careful.2(ptr %0, i32 %8, i64 %7)
  %ok4 = extractvalue { i1, i64 } %24, 0
  br i1 %ok4, label %ok5, label %fail6, !prof !1

stop:                                             ; preds = %slow3
  br label %failed

ok5:                                              ; preds = %go
  %25 = extractvalue { i1, i64 } %24, 1
  %26 = call { i64, i1 } @llvm.ssub.with.overflow.i64(i64 %3, i64 2)
  br label %fast7

fail6:                                            ; preds = %go
  br label %failed

fast7:                                            ; preds = %ok5
  %27 = extractvalue { i64, i1 } %26, 0
  br label %join18

join18:                                           ; preds = %fast7
  %28 = add i32 %1, 1
  %29 = call fastcc { i1, i64 } @m0.fib.careful.2(ptr %0, i32 %28, i64 %27)
  %ok19 = extractvalue { i1, i64 } %29, 0
  br i1 %ok19, label %ok20, label %fail21, !prof !1

ok20:                                             ; preds = %join18
  %30 = extractvalue { i1, i64 } %29, 1
  %31 = call { i64, i1 } @llvm.sadd.with.overflow.i64(i64 %25, i64 %30)
  %32 = extractvalue { i64, i1 } %31, 1
  %33 = xor i1 %32, true
  br i1 %33, label %fast22, label %slow23, !prof !1

fail21:                                           ; preds = %join18
  br label %failed

fast22:                                           ; preds = %ok20
  %34 = extractvalue { i64, i1 } %31, 0
  br label %join33

slow23:                                           ; preds = %ok20
  %vals24 = getelementptr [2 x i64], ptr %scratch34, i64 0
  %vals25 = getelementptr [2 x i64], ptr %scratch34, i64 2
  %35 = getelementptr [2 x i64], ptr %vals24, i64 0
  store i64 3, ptr %35, align 4
  %36 = getelementptr i8, ptr %35, i64 8
  store i64 %25, ptr %36, align 4
  %37 = getelementptr [2 x i64], ptr %vals24, i64 1
  store i64 3, ptr %37, align 4
  %38 = getelementptr i8, ptr %37, i64 8
  store i64 %30, ptr %38, align 4
  %39 = getelementptr i8, ptr %vm, i64 264
  store i32 %1, ptr %39, align 4
  %40 = call i1 @mist_rt_prim(ptr %0, i32 0, i32 2, ptr %vals24, ptr %vals25)
  br i1 %40, label %ok26, label %fail27, !prof !1

ok26:                                             ; preds = %slow23
  %tag28 = load i64, ptr %vals25, align 4
  %41 = getelementptr i8, ptr %vals25, i64 8
  %pay29 = load i64, ptr %41, align 4
  %42 = icmp eq i64 %tag28, 3
  br i1 %42, label %typed30, label %badtype31, !prof !1

fail27:                                           ; preds = %slow23
  br label %failed

typed30:                                          ; preds = %ok26
  br label %join33

badtype31:                                        ; preds = %ok26
  %vals32 = getelementptr [2 x i64], ptr %scratch34, i64 3
  store i64 %tag28, ptr %vals32, align 4
  %43 = getelementptr i8, ptr %vals32, i64 8
  store i64 %pay29, ptr %43, align 4
  %44 = call i1 @mist_rt_bad_value(ptr %0, ptr %vals32, i32 33)
  call void @mist_rt_fail(ptr %0, i32 34)
  ret { i1, i64 } zeroinitializer

join33:                                           ; preds = %typed30, %fast22
  %45 = phi i64 [ %34, %fast22 ], [ %pay29, %typed30 ]
  %46 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %45, 1
  ret { i1, i64 } %46

failed:                                           ; preds = %fail27, %fail21, %fail6, %stop
  %site = phi i32 [ 26, %stop ], [ 27, %fail6 ], [ 31, %fail21 ], [ 32, %fail27 ]
  call void @mist_rt_fail(ptr %0, i32 %site)
  ret { i1, i64 } zeroinitializer
}

define noundef i1 @m0.entry(ptr %0, ptr nocapture readonly %1, ptr nocapture readnone %2, ptr nocapture writeonly %3) local_unnamed_addr {
entry:
  %vm = load ptr, ptr %0, align 8, !invariant.load !0
  %4 = getelementptr i8, ptr %1, i64 8
  %pay = load i64, ptr %4, align 4
  %5 = getelementptr i8, ptr %vm, i64 264
  %depth = load i32, ptr %5, align 4
  %6 = icmp slt i64 %pay, 2
  br i1 %6, label %base.i, label %call.i

base.i:                                           ; preds = %entry
  %7 = insertvalue { i1, i64 } { i1 true, i64 undef }, i64 %pay, 1
  br label %m0.fib.0.peek.exit

call.i:                                           ; preds = %entry
  %8 = tail call fastcc { i1, i64 } @m0.fib.0(ptr nonnull %0, i32 %depth, i64 %pay)
  br label %m0.fib.0.peek.exit

m0.fib.0.peek.exit:                               ; preds = %base.i, %call.i
  %common.ret.op.i = phi { i1, i64 } [ %7, %base.i ], [ %8, %call.i ]
  store i32 %depth, ptr %5, align 4
  %9 = extractvalue { i1, i64 } %common.ret.op.i, 0
  br i1 %9, label %ok, label %common.ret

common.ret:                                       ; preds = %m0.fib.0.peek.exit, %ok
  ret i1 %9

ok:                                               ; preds = %m0.fib.0.peek.exit
  %10 = extractvalue { i1, i64 } %common.ret.op.i, 1
  store i64 3, ptr %3, align 4
  %11 = getelementptr i8, ptr %3, i64 8
  store i64 %10, ptr %11, align 4
  br label %common.ret
}

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.start.p0(i64 immarg, ptr nocapture) #3

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite)
declare void @llvm.lifetime.end.p0(i64 immarg, ptr nocapture) #3

attributes #0 = { mustprogress nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #1 = { mustprogress nocallback nofree nosync nounwind willreturn }
attributes #2 = { noinline optnone }
attributes #3 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite) }

!0 = !{}
!1 = !{!"branch_weights", i32 2000, i32 1}
!2 = !{!"branch_weights", i32 1, i32 2000}
